// nmt-bleu: corpus BLEU and chrF/chrF++ with sacreBLEU 2.x's command line, defaults, signatures
// and text/JSON output (sacrebleu.py, utils.print_single_results, metrics/base.Score.format),
// so `nmt-bleu ref.txt -i hyp.txt -m bleu chrf` reads like `sacrebleu ref.txt -i hyp.txt -m bleu
// chrf`. Deliberate differences: text output is the default (sacreBLEU 2.x defaults to JSON;
// --json or -f json selects it), one system only, no test-set download, no .gz input.

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/cli.h"
#include "eval/bleu.h"
#include "eval/chrf.h"

namespace {

using nmt::eval::BleuOptions;
using nmt::eval::ChrfOptions;

struct CommandLine {
  std::vector<std::string> refs;
  std::string input;  // empty: stdin
  std::vector<std::string> metrics{"bleu"};
  bool score_only = false;
  int width = 1;
  std::string format = "text";
  bool json = false;
};

// sacreBLEU spells some options as single-dash words (-lc, -tok...), which CLI11 would read as
// bundles of one-letter flags; rewrite them to their long names before parsing.
std::vector<std::string> rewrite_sacrebleu_aliases(int argc, char** argv) {
  static const std::map<std::string, std::string> kAliases = {
      {"-lc", "--lowercase"},       {"-tok", "--tokenize"},       {"-sv", "--smooth-value"},
      {"-cc", "--chrf-char-order"}, {"-cw", "--chrf-word-order"},
  };
  std::vector<std::string> args(argv, argv + argc);
  for (auto& arg : args) {
    const auto eq = arg.find('=');
    const auto it = kAliases.find(arg.substr(0, eq));
    if (it != kAliases.end()) arg = it->second + (eq == std::string::npos ? "" : arg.substr(eq));
  }
  return args;
}

std::vector<std::string> read_lines(const std::string& path, const std::string& role) {
  if (path.empty()) {
    std::string data{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
    return nmt::eval::split_lines(data, "hypothesis <stdin>", /*universal_newlines=*/true);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot open {} file '{}'", role, path));
  std::string data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return nmt::eval::split_lines(data, fmt::format("{} file '{}'", role, path), false);
}

void check_line_counts(const CommandLine& cl, const std::vector<std::string>& hyps,
                       const std::vector<std::vector<std::string>>& refs) {
  const std::string hyp_name = cl.input.empty() ? "<stdin>" : cl.input;
  if (hyps.empty()) throw std::runtime_error(fmt::format("hypothesis {} has no lines", hyp_name));
  for (std::size_t r = 0; r < refs.size(); ++r) {
    if (refs[r].size() != hyps.size()) {
      throw std::runtime_error(
          fmt::format("line counts differ: hypothesis {} has {} lines, reference {} has {}",
                      hyp_name, hyps.size(), cl.refs[r], refs[r].size()));
    }
  }
}

// One metric's outcome, ready for either output format.
struct Outcome {
  std::string name;
  double score;
  std::string signature;
  std::string verbose;  // BLEU only
};

nlohmann::ordered_json to_json(const Outcome& o, int width) {
  nlohmann::ordered_json j;
  j["name"] = o.name;
  j["score"] = std::stod(fmt::format("{:.{}f}", o.score, width));  // rounded like sacreBLEU
  j["signature"] = o.signature;
  if (!o.verbose.empty()) j["verbose_score"] = o.verbose;
  std::istringstream fields(o.signature);
  for (std::string field; std::getline(fields, field, '|');) {
    const auto colon = field.find(':');
    j[field.substr(0, colon)] = field.substr(colon + 1);
  }
  return j;
}

// print_single_results: JSON objects (a list when several), or text lines right-aligned on "=".
void print_outcomes(const std::vector<Outcome>& outcomes, const CommandLine& cl) {
  std::vector<std::string> lines;
  for (const auto& o : outcomes) {
    if (cl.score_only) {
      lines.push_back(fmt::format("{:.{}f}", o.score, cl.width));
    } else if (cl.format == "json") {
      lines.push_back(to_json(o, cl.width).dump(1));
    } else {
      lines.push_back(
          nmt::eval::format_score_line(o.name, o.score, cl.width, o.signature, o.verbose));
    }
  }
  if (cl.format == "json" && lines.size() > 1) {  // sacreBLEU wraps even bare -b scores
    std::string joined;
    for (const auto& line : lines) joined += (joined.empty() ? "" : ",\n") + line;
    std::cout << "[\n" << joined << "\n]\n";
    return;
  }
  std::size_t width = 0;
  for (const auto& line : lines) width = std::max(width, line.find(" = ") + 1);
  for (const auto& line : lines) {
    const auto split = line.find(" = ");
    const bool align = lines.size() > 1 && split != std::string::npos;
    std::cout << (align ? std::string(width - split - 1, ' ') : "") << line << "\n";
  }
}

Outcome score_bleu(const std::vector<std::string>& hyps,
                   const std::vector<std::vector<std::string>>& refs, const BleuOptions& options) {
  const auto result = nmt::eval::corpus_bleu(hyps, refs, options);
  // sacreBLEU's threshold for suspecting tokenized input.
  if (result.tokenized_period_lines >= 100) {
    spdlog::warn(
        "{} hypothesis lines end in a separated period (' .'): the input looks tokenized, which "
        "lowers BLEU under 13a; score detokenized text, or pass --force to silence this",
        result.tokenized_period_lines);
  }
  return {"BLEU", result.score.score, result.signature, result.score.verbose()};
}

int run(CommandLine cl, const BleuOptions& bleu, const ChrfOptions& chrf) {
  if (cl.json) cl.format = "json";
  std::vector<std::vector<std::string>> refs;
  for (const auto& path : cl.refs) refs.push_back(read_lines(path, "reference"));
  const auto hyps = read_lines(cl.input, "hypothesis");
  check_line_counts(cl, hyps, refs);
  std::vector<Outcome> outcomes;
  // sacreBLEU reports metrics sorted by name: BLEU before chrF.
  if (std::count(cl.metrics.begin(), cl.metrics.end(), "bleu")) {
    outcomes.push_back(score_bleu(hyps, refs, bleu));
  }
  if (std::count(cl.metrics.begin(), cl.metrics.end(), "chrf")) {
    const auto result = nmt::eval::corpus_chrf(hyps, refs, chrf);
    outcomes.push_back({result.name, result.score, result.signature, ""});
  }
  print_outcomes(outcomes, cl);
  return 0;
}

void add_bleu_flags(CLI::App& app, BleuOptions& bleu) {
  app.add_flag("--lowercase", bleu.lowercase, "BLEU: case-insensitive (-lc; chrF has its own)");
  app.add_option("--tokenize", bleu.tokenize, "BLEU tokenizer: 13a or none (-tok)")
      ->check(CLI::IsMember({"13a", "none"}))
      ->capture_default_str();
  app.add_option("-s,--smooth-method", bleu.smooth, "BLEU smoothing: exp, floor, add-k or none")
      ->check(CLI::IsMember({"exp", "floor", "add-k", "none"}))
      ->capture_default_str();
  app.add_option("--smooth-value", bleu.smooth_value,
                 "Value for floor (default 0.1) and add-k (default 1) (-sv)");
  app.add_flag("--force", bleu.force, "Do not warn about input that looks tokenized");
}

void add_chrf_flags(CLI::App& app, ChrfOptions& chrf) {
  app.add_option("--chrf-char-order", chrf.char_order, "chrF character n-gram order (-cc)")
      ->capture_default_str();
  app.add_option("--chrf-word-order", chrf.word_order, "chrF word n-gram order; 2 is chrF++ (-cw)")
      ->capture_default_str();
  app.add_option("--chrf-beta", chrf.beta, "chrF recall weight")->capture_default_str();
  app.add_flag("--chrf-whitespace", chrf.whitespace, "chrF: keep whitespace in character n-grams");
  app.add_flag("--chrf-lowercase", chrf.lowercase, "chrF: case-insensitive");
  app.add_flag("--chrf-eps-smoothing", chrf.eps_smoothing,
               "chrF: chrF++.py-style eps smoothing instead of effective order");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Corpus BLEU and chrF/chrF++ with sacreBLEU 2.x's algorithms, defaults and signatures: "
      "nmt-bleu REF [REF...] -i HYP (hypothesis on stdin without -i).",
      "nmt-bleu"};
  CommandLine cl;
  BleuOptions bleu;
  ChrfOptions chrf;
  nmt::LogOptions log;
  log.tool = "nmt-bleu";
  app.add_option("refs", cl.refs, "Reference files, one segment per line")->required();
  app.add_option("-i,--input", cl.input, "Hypothesis file (default: stdin)");
  app.add_option("-m,--metrics", cl.metrics, "Metrics: bleu, chrf (default: bleu)")
      ->check(CLI::IsMember({"bleu", "chrf"}));
  app.add_flag("-b,--score-only", cl.score_only, "Print only the computed score");
  app.add_option("-w,--width", cl.width, "Decimal places of the score")
      ->check(CLI::Range(0, 16))
      ->capture_default_str();
  app.add_option("-f,--format", cl.format, "Output format: text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  app.add_flag("--json", cl.json, "Same as -f json");
  app.add_flag_callback(
      "-q,--quiet", [&log] { log.level = "error"; }, "Suppress warnings");
  add_bleu_flags(app, bleu);
  add_chrf_flags(app, chrf);
  nmt::add_logging_flags(app, log);
  auto args = rewrite_sacrebleu_aliases(argc, argv);
  std::vector<char*> rewritten;
  for (auto& arg : args) rewritten.push_back(arg.data());
  return nmt::run_tool(app, log, static_cast<int>(rewritten.size()), rewritten.data(),
                       [&] { return run(cl, bleu, chrf); });
}
