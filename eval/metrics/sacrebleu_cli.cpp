// sacreBLEU's command line (see sacrebleu_cli.h): argparse's parsing emulated over CLI11, the
// option table, and sacrebleu.py's checks before scoring.

#include "eval/metrics/sacrebleu_cli.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <map>

#include "eval/metrics/sacrebleu_scoring.h"

namespace nmt::eval {
namespace {

// argparse's view of single-dash words and long-option prefixes, rewritten for CLI11.
const std::map<std::string, std::string> kSingleDashWords = {
    {"-ol", "--origlang"},        {"-nr", "--num-refs"},        {"-sl", "--sentence-level"},
    {"-sv", "--smooth-value"},    {"-tok", "--tokenize"},       {"-lc", "--lowercase"},
    {"-cc", "--chrf-char-order"}, {"-cw", "--chrf-word-order"}, {"-ci", "--confidence"},
    {"-cin", "--confidence-n"},   {"-par", "--paired-ar"},      {"-pbs", "--paired-bs"},
    {"-parn", "--paired-ar-n"},   {"-pbsn", "--paired-bs-n"},   {"-sh", "--short"},
    {"-nc", "--no-color"}};

// argparse stores a repeated nargs option's last group of values ("-i a -i b c": [b, c]), CLI11
// would append them all: drop the earlier groups.
std::vector<std::string> keep_last_groups(std::vector<std::string> args) {
  const auto group_of = [](const std::string& a) -> std::string {
    if (a == "-i" || a == "--input") return "input";
    if (a == "-m" || a == "--metrics") return "metrics";
    return "";
  };
  std::map<std::string, std::size_t> last;
  for (std::size_t i = 1; i < args.size() && args[i] != "--"; ++i) {
    if (const auto g = group_of(args[i]); !g.empty()) last[g] = i;
  }
  std::vector<std::string> out{args.front()};
  for (std::size_t i = 1; i < args.size(); ++i) {
    const auto g = group_of(args[i]);
    if (g.empty() || last[g] == i) {
      out.push_back(args[i]);
      continue;
    }
    while (i + 1 < args.size() && (args[i + 1].empty() || args[i + 1][0] != '-')) ++i;
  }
  return out;
}

// sacreBLEU's checks of option combinations (argument errors here: exit 2).
void check_combinations(const SacreBleuArgs& args) {
  if (!args.unsupported.empty()) {
    throw UsageError(
        fmt::format("{} needs sacreBLEU's test sets, which nmt-bleu does not have: "
                    "pass reference files instead",
                    fmt::join(args.unsupported, ", ")));
  }
  if (args.encoding != "utf-8" && args.encoding != "UTF-8" && args.encoding != "utf8") {
    throw UsageError("nmt-bleu reads UTF-8 only (--encoding " + args.encoding + ")");
  }
  if (args.sentence_level && args.metrics.size() > 1) {
    throw UsageError("Only one metric can be used in sentence-level mode.");
  }
  if (args.num_refs != 1 && args.refs.size() > 1) {
    throw UsageError(
        "--num-refs splits one reference file on tabs; it cannot be combined with "
        "several reference files");
  }
  if (args.num_refs < 1) throw UsageError("--num-refs must be at least 1");
  if (args.refs.empty()) {
    throw UsageError("I need reference files (before -i/--input): nmt-bleu has no test sets (-t)");
  }
  if (args.paired_ar && args.paired_bs) {
    throw UsageError("--paired-ar and --paired-bs are mutually exclusive");
  }
}

// BLEU's tokenizer: -tok, else the default for -l's target language (zh, ja-mecab, ko-mecab, 13a),
// with sacreBLEU's warnings for a tokenizer that does not suit the target language.
std::string bleu_tokenizer(const SacreBleuArgs& args) {
  if (!args.langpair.empty() && args.langpair.find('-') == std::string::npos) {
    throw UsageError("-l/--language-pair wants SRC-TRG (e.g. en-de), got '" + args.langpair + "'");
  }
  const std::string target = args.langpair.substr(args.langpair.find('-') + 1);
  if (!args.tokenize) {
    return target == "zh"   ? "zh"
           : target == "ja" ? "ja-mecab"
           : target == "ko" ? "ko-mecab"
                            : "13a";
  }
  if (target == "zh" && *args.tokenize != "zh") {
    spdlog::warn("Consider using the 'zh' or 'spm' tokenizer for Chinese.");
  }
  if (target == "ja")
    spdlog::warn("Consider using the 'ja-mecab' or 'spm' tokenizer for Japanese.");
  if (target == "ko") spdlog::warn("Consider using the 'ko-mecab' or 'spm' tokenizer for Korean.");
  return *args.tokenize;
}

// sacreBLEU's checks once the systems are read: the mode fits their number, every system has as
// many lines as every reference.
void check_systems(const SacreBleuArgs& args,
                   const std::vector<std::vector<std::string>>& ref_streams,
                   const SacreBleuSystems& systems) {
  const bool paired = args.paired_ar || args.paired_bs;
  const std::size_t num_sys = systems.lines.size();
  if (args.sentence_level && num_sys > 1) {
    throw UsageError("Only one system can be evaluated in sentence-level mode.");
  }
  if (args.sentence_level && (args.confidence || paired)) {
    throw UsageError("Statistical tests are unavailable in sentence-level mode.");
  }
  if (paired && num_sys == 1) {
    throw UsageError("Paired tests require multiple input systems given to --input (-i).");
  }
  if (num_sys > 1 && args.confidence) {
    throw UsageError("Use paired tests (--paired-bs or --paired-ar) for multiple systems.");
  }
  for (const auto& lines : systems.lines) {
    if (lines.empty()) throw std::runtime_error("a system has no lines");
    for (std::size_t r = 0; r < ref_streams.size(); ++r) {
      if (ref_streams[r].size() != lines.size()) {
        throw std::runtime_error(fmt::format(
            "System and reference streams have different lengths ({} lines, reference {} has {})",
            lines.size(), r + 1, ref_streams[r].size()));
      }
    }
  }
}

}  // namespace

std::vector<std::string> argparse_rewrite(std::vector<std::string> args, const CLI::App& app) {
  if (args.empty()) return args;
  std::vector<std::string> longs;
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& name : opt->get_lnames()) longs.push_back("--" + name);
  }
  for (std::size_t i = 1; i < args.size(); ++i) {
    std::string& arg = args[i];
    if (arg == "--") break;
    const auto eq = arg.find('=');
    const std::string name = arg.substr(0, eq),
                      rest = eq == std::string::npos ? "" : arg.substr(eq);
    if (const auto it = kSingleDashWords.find(name); it != kSingleDashWords.end()) {
      arg = it->second + rest;
    } else if (name.size() > 2 && name.compare(0, 2, "--") == 0 &&
               std::find(longs.begin(), longs.end(), name) == longs.end()) {
      std::vector<std::string> matches;
      for (const auto& l : longs) {
        if (l.compare(0, name.size(), name) == 0) matches.push_back(l);
      }
      if (matches.size() > 1) {
        throw UsageError(
            fmt::format("ambiguous option: {} could match {}", name, fmt::join(matches, ", ")));
      }
      if (matches.size() == 1) arg = matches.front() + rest;
    }
  }
  return keep_last_groups(std::move(args));
}

void add_sacrebleu_options(CLI::App& app, SacreBleuArgs& args) {
  for (const char* name : {"--citation", "--cite", "--list"}) {
    app.add_flag_callback(
        name, [&args, name] { args.unsupported.push_back(name); }, "Unsupported");
  }
  for (const char* name : {"-t,--test-set", "--origlang", "--subset", "--download"}) {
    app.add_option_function<std::string>(
        name, [&args, name](const std::string&) { args.unsupported.push_back(name); },
        "Unsupported");
  }
  app.add_option_function<std::vector<std::string>>(
         "--echo",
         [&args](const std::vector<std::string>&) { args.unsupported.push_back("--echo"); },
         "Unsupported")
      ->expected(1, -1);
  app.add_option("-l,--language-pair", args.langpair, "SRC-TRG: TRG zh selects the zh tokenizer");
  app.add_option("-i,--input", args.inputs, "System output file(s) (default: stdin, tab-separated)")
      ->expected(0, -1);
  app.add_option("refs", args.refs, "Reference files, one segment per line (before -i)");
  app.add_option("--num-refs", args.num_refs, "Split each reference line on tabs into N (-nr)");
  app.add_option("-e,--encoding", args.encoding, "Input encoding: utf-8 only");
  app.add_option("-m,--metrics", args.metrics, "Metrics: bleu, chrf, ter (default: bleu)")
      ->check(CLI::IsMember({"bleu", "chrf", "ter"}))
      ->expected(1, -1);
  app.add_flag("--sentence-level", args.sentence_level, "Score every segment (-sl)");
  app.add_option("-s,--smooth-method", args.bleu.smooth,
                 "BLEU smoothing: exp, floor, add-k or none")
      ->check(CLI::IsMember({"exp", "floor", "add-k", "none"}));
  app.add_option("--smooth-value", args.bleu.smooth_value, "floor (0.1) or add-k (1) value (-sv)");
  app.add_option("--tokenize", args.tokenize, "BLEU tokenizer: 13a, none, intl, char, zh (-tok)")
      ->check(CLI::IsMember({"none", "zh", "13a", "intl", "char", "ja-mecab", "ko-mecab", "spm",
                             "flores101", "flores200", "spBLEU-1K"}));
  app.add_flag("--lowercase", args.bleu.lowercase, "BLEU: case-insensitive (-lc)");
  app.add_flag("--force", args.bleu.force, "BLEU: do not warn about tokenized-looking input");
  app.add_option("--chrf-char-order", args.chrf.char_order, "chrF character n-gram order (-cc)");
  app.add_option("--chrf-word-order", args.chrf.word_order,
                 "chrF word n-gram order; 2: chrF++ (-cw)");
  app.add_option("--chrf-beta", args.chrf.beta, "chrF recall weight");
  app.add_flag("--chrf-whitespace", args.chrf.whitespace, "chrF: keep whitespace in char n-grams");
  app.add_flag("--chrf-lowercase", args.chrf.lowercase, "chrF: case-insensitive");
  app.add_flag("--chrf-eps-smoothing", args.chrf.eps_smoothing, "chrF: eps smoothing (chrF++.py)");
  app.add_flag("--ter-case-sensitive", args.ter.case_sensitive, "TER: keep case");
  app.add_flag("--ter-asian-support", args.ter.asian_support, "TER: CJK handling");
  app.add_flag("--ter-no-punct", args.ter.no_punct, "TER: remove punctuation");
  app.add_flag("--ter-normalized", args.ter.normalized, "TER: Tercom normalization/tokenization");
  app.add_flag("--confidence", args.confidence, "Bootstrap 95% confidence interval (-ci)");
  app.add_option("--confidence-n", args.confidence_n, "Bootstrap resamples for -ci (-cin)");
  app.add_flag("--paired-ar", args.paired_ar, "Paired approximate randomization test (-par)");
  app.add_flag("--paired-bs", args.paired_bs, "Paired bootstrap resampling test (-pbs)");
  app.add_option("--paired-ar-n", args.paired_ar_n, "Randomization trials (-parn)");
  app.add_option("--paired-bs-n", args.paired_bs_n, "Bootstrap resamples (-pbsn)");
  app.add_option("-j,--paired-jobs", args.paired_jobs, "Accepted; tests run in one thread");
  app.add_flag("--short", args.short_sig, "Short signatures (-sh)");
  app.add_flag("-b,--score-only", args.score_only, "Print only the computed score");
  app.add_option("-w,--width", args.width, "Decimal places")->check(CLI::Range(0, 16));
  app.add_flag("-d,--detail", args.detail, "Subset details (none without test sets)");
  app.add_flag("--no-color", "Accepted; output is never coloured (-nc)");
  app.add_option("-f,--format", args.format, "json (default), text or latex (several systems)")
      ->check(CLI::IsMember({"json", "text", "latex"}));
  app.add_flag("--json", args.json, "nmt-bleu's shorthand for -f json");
}

int run_sacrebleu(SacreBleuArgs args, std::istream& in, std::ostream& out) {
  if (args.json) args.format = "json";
  if (const char* env = std::getenv("SACREBLEU_FORMAT")) {
    std::string f = env;
    std::transform(f.begin(), f.end(), f.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (f == "json" || f == "text" || f == "latex") args.format = f;
  }
  check_combinations(args);
  const bool paired = args.paired_ar || args.paired_bs;
  args.bleu.tokenize = bleu_tokenizer(args);
  args.bleu.effective_order = args.sentence_level;
  const auto ref_streams = read_sacrebleu_references(args);
  const SacreBleuSystems systems = read_sacrebleu_systems(args, paired, in);
  check_systems(args, ref_streams, systems);
  MetricSet set;
  try {
    set = make_metrics(args);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const SegmentReferences refs = gather_references(ref_streams, systems.lines[0].size());
  if (args.sentence_level) return score_sentences(args, set, systems, refs, out);
  if (args.detail && args.format == "json") args.format = "text";
  if (systems.lines.size() == 1) return score_one_system(args, set, systems.lines[0], refs, out);
  spdlog::info("Found {} systems.", systems.lines.size());
  return score_many_systems(args, set, systems, refs, out);
}

}  // namespace nmt::eval
