// nmt-bleu: sacreBLEU 2.x's command line (sacrebleu.py) over nmt_eval: BLEU, chrF/chrF++ and TER
// with sacreBLEU's options, defaults, signatures and output, corpus or sentence level, bootstrap
// confidence intervals (-ci) and paired tests over several systems (-i BASELINE SYS..., --paired-bs
// or --paired-ar), so `nmt-bleu ref.txt -i hyp.txt -m bleu chrf ter` prints what `sacrebleu ...`
// prints, signature version field aside ("nmt-bleu-2.4.0"). Options parse as argparse parses
// them: single-dash words (-sl -tok -lc -cin ...) are options, never bundles of letters, and a
// long option may be shortened to any unique prefix. SACREBLEU_SEED (default 12345, "none":
// unseeded) and SACREBLEU_FORMAT are read as sacreBLEU reads them.
// Deliberate differences: every argument error exits 2 (sacreBLEU exits 1 for the checks of its
// own), no test sets (-t, -l's test-set uses, --echo, --download, --list, --citation are refused),
// no .gz input, UTF-8 only, no colour, --paired-jobs accepted but the tests run in one thread, and
// --json kept as nmt-bleu's shorthand for -f json.

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>

#include "common/cli.h"
#include "eval/metric.h"
#include "eval/report.h"
#include "eval/significance.h"
#include "eval/tokenizer_13a.h"

namespace {

using namespace nmt::eval;
using nmt::UsageError;

struct CommandLine {
  std::vector<std::string> refs;
  std::optional<std::vector<std::string>> inputs;  // nullopt: stdin, systems split on tabs
  int num_refs = 1;
  std::string encoding = "utf-8";
  std::vector<std::string> metrics{"bleu"};
  bool sentence_level = false;
  std::optional<std::string> tokenize;  // BLEU; default from -l's target language, else 13a
  std::string langpair;
  bool confidence = false;
  int confidence_n = kDefaultBootstrapSamples;
  bool paired_ar = false, paired_bs = false;
  int paired_ar_n = kDefaultArTrials, paired_bs_n = kDefaultBootstrapSamples;
  int paired_jobs = 1;
  bool short_sig = false, score_only = false, detail = false, json = false;
  int width = 1;
  std::string format = "json";
  std::vector<std::string> unsupported;  // test-set options given
};

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

std::vector<std::string> argparse_rewrite(int argc, char** argv, const CLI::App& app) {
  std::vector<std::string> longs;
  for (const CLI::Option* opt : app.get_options()) {
    for (const auto& name : opt->get_lnames()) longs.push_back("--" + name);
  }
  std::vector<std::string> args(argv, argv + argc);
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

std::vector<std::string> read_file_lines(const std::string& path, const std::string& role) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot open {} file '{}'", role, path));
  std::string data{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  return split_lines(data, fmt::format("{} file '{}'", role, path), false);
}

// Tab-split fields exactly as Python's str.split('\t', maxsplit).
std::vector<std::string> split_tabs(const std::string& line, std::size_t max_fields) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  while (fields.size() + 1 < max_fields) {
    const auto tab = line.find('\t', start);
    if (tab == std::string::npos) break;
    fields.push_back(line.substr(start, tab - start));
    start = tab + 1;
  }
  fields.push_back(line.substr(start));
  return fields;
}

std::vector<std::vector<std::string>> read_references(const CommandLine& cl) {
  std::vector<std::vector<std::string>> refs(std::max<std::size_t>(cl.refs.size(), cl.num_refs));
  for (std::size_t r = 0; r < cl.refs.size(); ++r) {
    const auto lines = read_file_lines(cl.refs[r], "reference");
    for (std::size_t n = 0; n < lines.size(); ++n) {
      if (cl.num_refs == 1) {
        refs[r].push_back(lines[n]);
        continue;
      }
      const auto fields = split_tabs(lines[n], static_cast<std::size_t>(cl.num_refs));
      if (fields.size() != static_cast<std::size_t>(cl.num_refs)) {
        throw std::runtime_error(fmt::format("{}: line {}: expected {} fields, but found {}",
                                             cl.refs[r], n + 1, cl.num_refs, fields.size()));
      }
      for (std::size_t k = 0; k < fields.size(); ++k) refs[k].push_back(fields[k]);
    }
  }
  return refs;
}

struct Systems {
  std::vector<std::string> names;
  std::vector<std::vector<std::string>> lines;
};

Systems read_systems(const CommandLine& cl, bool paired) {
  Systems out;
  if (!cl.inputs) {
    // stdin: one system per tab-separated field, their number fixed by the first line.
    std::string data{std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()};
    auto lines = split_lines(data, "<stdin>", /*universal_newlines=*/true);
    if (lines.empty()) lines.emplace_back();  // readline() of an empty stream gives one ''
    const auto first = split_tabs(lines[0], std::string::npos);
    out.lines.resize(first.size());
    for (std::size_t n = 0; n < lines.size(); ++n) {
      const auto fields = split_tabs(lines[n], std::string::npos);
      if (fields.size() != first.size()) {
        throw std::runtime_error(
            "the number of tab-delimited fields in the input stream differ across lines");
      }
      for (std::size_t s = 0; s < fields.size(); ++s) {
        out.lines[s].push_back(n == 0 ? fields[s]
                                      : std::string(rstrip_python_whitespace(fields[s])));
      }
    }
    for (std::size_t s = 0; s < first.size(); ++s) {
      out.names.push_back(fmt::format("System {}", s + 1));
    }
    if (paired) {
      out.names[0] = "Baseline";
      for (std::size_t s = 1; s < out.names.size(); ++s) out.names[s] = fmt::format("System {}", s);
    }
    return out;
  }
  for (const auto& path : *cl.inputs) {
    if (std::find(out.names.begin(), out.names.end(), path) != out.names.end()) {
      if (paired && path == out.names.front()) {
        spdlog::info("Ignoring '{}' as it was also given as the baseline.", path);
        continue;
      }
      throw std::runtime_error(fmt::format(
          "'{}' already used to name a system; give each system a different file name", path));
    }
    out.lines.push_back(read_file_lines(path, "hypothesis"));
    out.names.push_back(path);
  }
  if (paired && !out.names.empty()) out.names[0] = "Baseline: " + out.names[0];
  return out;
}

// Metrics by sacreBLEU's names, in the order given.
struct MetricSet {
  std::vector<std::string> keys;  // BLEU, CHRF, TER
  std::vector<std::unique_ptr<Metric>> metrics;
};

MetricSet make_metrics(const std::vector<std::string>& names, const BleuOptions& bleu,
                       const ChrfOptions& chrf, const TerOptions& ter) {
  MetricSet set;
  for (const auto& name : names) {
    const std::string key = name == "bleu" ? "BLEU" : name == "chrf" ? "CHRF" : "TER";
    if (std::find(set.keys.begin(), set.keys.end(), key) != set.keys.end()) continue;
    set.keys.push_back(key);
    if (key == "BLEU") set.metrics.push_back(make_bleu_metric(bleu));
    if (key == "CHRF") set.metrics.push_back(make_chrf_metric(chrf));
    if (key == "TER") set.metrics.push_back(make_ter_metric(ter));
  }
  return set;
}

std::vector<std::size_t> sorted_order(const MetricSet& set) {
  std::vector<std::size_t> order(set.keys.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](auto a, auto b) { return set.keys[a] < set.keys[b]; });
  return order;
}

// SACREBLEU_SEED as sacreBLEU reads it: the text for the signature and the seed (nullopt: none).
struct Seed {
  std::string text;
  std::optional<std::uint64_t> value;
};

Seed read_seed() {
  const char* env = std::getenv("SACREBLEU_SEED");
  Seed seed{env ? env : "12345", std::nullopt};
  std::string lower = seed.text;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  seed.text = lower;
  if (lower == "none") return seed;
  try {
    std::size_t used = 0;
    const long long v = std::stoll(lower, &used);
    if (used != lower.size() || v < 0) throw std::invalid_argument(lower);
    seed.value = static_cast<std::uint64_t>(v);
  } catch (const std::exception&) {
    throw UsageError("SACREBLEU_SEED must be a non-negative integer or 'none', not '" + lower +
                     "'");
  }
  return seed;
}

void warn_tokenized(const Metric& metric, const std::vector<std::string>& hyps) {
  if (!metric.warns_tokenized()) return;
  const auto count = std::count_if(hyps.begin(), hyps.end(), [](const std::string& h) {
    return h.size() >= 2 && h.compare(h.size() - 2, 2, " .") == 0;
  });
  if (count >= 100) {
    spdlog::warn(
        "{} hypothesis lines end in a tokenized period (' .'): is the output still tokenized? "
        "BLEU of tokenized text is not comparable; detokenize it, or pass --force if it is "
        "meant to be so",
        count);
  }
}

OutputFormat output_format(const std::string& name) {
  return name == "json"    ? OutputFormat::kJson
         : name == "latex" ? OutputFormat::kLatex
                           : OutputFormat::kText;
}

int score_sentences(const CommandLine& cl, const MetricSet& set, const Systems& systems,
                    const SegmentReferences& refs) {
  const Metric& metric = *set.metrics.front();
  for (std::size_t i = 0; i < systems.lines[0].size(); ++i) {
    const StatsRow stats = metric.segment_stats(systems.lines[0][i], refs.segments[i]);
    const std::string sig =
        metric.signature(std::to_string(refs.segments[i].size())).format(cl.short_sig);
    std::cout << format_score(metric.score(stats), cl.width, cl.score_only, sig, false) << "\n";
  }
  return 0;
}

int score_one_system(const CommandLine& cl, const MetricSet& set,
                     const std::vector<std::string>& hyps, const SegmentReferences& refs) {
  const bool json = cl.format == "json";
  std::vector<std::string> lines;
  for (const std::size_t m : sorted_order(set)) {
    const Metric& metric = *set.metrics[m];
    warn_tokenized(metric, hyps);
    const StatsMatrix stats = corpus_stats(metric, hyps, refs);
    Signature sig = metric.signature(refs.nrefs);
    std::optional<Interval> interval;
    if (cl.confidence && cl.confidence_n > 1) {
      const Seed seed = read_seed();
      interval = estimate_interval(bootstrap_scores(
          stats, [&](const StatsRow& s) { return metric.score(s).score; }, cl.confidence_n,
          seed.value));
      sig.bootstrap = cl.confidence_n;
      sig.seed = seed.text;
    }
    lines.push_back(format_score(metric.score(sum_rows(stats)), cl.width, cl.score_only,
                                 sig.format(cl.short_sig && !json), json, interval));
  }
  std::cout << single_results(lines, json);
  if (cl.detail) std::cout << "No subset information found. Consider using --origlang argument.\n";
  return 0;
}

int score_many_systems(const CommandLine& cl, const MetricSet& set, const Systems& systems,
                       const SegmentReferences& refs) {
  ResultsTable table;
  table.systems = systems.names;
  const bool paired = cl.paired_bs || cl.paired_ar;
  table.paired = paired;
  std::optional<PairedTestInfo> info;
  // sacreBLEU runs its default for a count <= 0 but prints the count given in the notes.
  const int given = cl.paired_bs ? cl.paired_bs_n : cl.paired_ar_n;
  const int samples = given > 0      ? given
                      : cl.paired_bs ? kDefaultBootstrapSamples
                                     : kDefaultArTrials;
  if (paired) info = PairedTestInfo{cl.paired_bs, given};
  std::vector<std::size_t> order = paired ? std::vector<std::size_t>{} : sorted_order(set);
  if (paired) {
    for (std::size_t m = 0; m < set.keys.size(); ++m) order.push_back(m);
  }
  for (const std::size_t m : order) {
    const Metric& metric = *set.metrics[m];
    const StatsScorer scorer = [&](const StatsRow& s) { return metric.score(s).score; };
    std::vector<StatsMatrix> stats;
    for (const auto& hyps : systems.lines) {
      warn_tokenized(metric, hyps);
      stats.push_back(corpus_stats(metric, hyps, refs));
    }
    std::vector<TableCell> cells;
    Signature sig = metric.signature(refs.nrefs);
    if (!paired) {
      for (const auto& s : stats) cells.push_back({scorer(sum_rows(s)), {}, {}});
    } else {
      const Seed seed = read_seed();
      sig.seed = seed.value ? std::to_string(*seed.value) : "none";
      TableCell baseline{scorer(sum_rows(stats[0])), {}, {}};
      if (cl.paired_bs) {
        sig.bootstrap = samples;
        baseline.interval =
            estimate_interval(bootstrap_scores(stats[0], scorer, samples, seed.value));
      } else {
        sig.randomization = samples;
      }
      cells.push_back(baseline);
      // sacreBLEU passes `seed if seed else None` to each test: seed 0 means unseeded there.
      const std::optional<std::uint64_t> test_seed =
          seed.value && *seed.value != 0 ? seed.value : std::nullopt;
      for (std::size_t s = 1; s < stats.size(); ++s) {
        const PairedResult r =
            cl.paired_bs ? paired_bootstrap(stats[0], stats[s], scorer, samples, test_seed)
                         : paired_randomization(stats[0], stats[s], scorer, samples, test_seed);
        cells.push_back({r.score, r.p_value, r.interval});
      }
    }
    table.metrics.push_back(metric.name());
    table.cells.push_back(std::move(cells));
    table.signatures.emplace_back(metric.name(), sig.format(cl.short_sig));
  }
  std::cout << results_table(table, output_format(cl.format), cl.width, info);
  return 0;
}

// sacreBLEU's checks of option combinations (argument errors here: exit 2).
void check_combinations(const CommandLine& cl) {
  if (!cl.unsupported.empty()) {
    throw UsageError(
        fmt::format("{} needs sacreBLEU's test sets, which nmt-bleu does not have: "
                    "pass reference files instead",
                    fmt::join(cl.unsupported, ", ")));
  }
  if (cl.encoding != "utf-8" && cl.encoding != "UTF-8" && cl.encoding != "utf8") {
    throw UsageError("nmt-bleu reads UTF-8 only (--encoding " + cl.encoding + ")");
  }
  if (cl.sentence_level && cl.metrics.size() > 1) {
    throw UsageError("Only one metric can be used in sentence-level mode.");
  }
  if (cl.num_refs != 1 && cl.refs.size() > 1) {
    throw UsageError(
        "--num-refs splits one reference file on tabs; it cannot be combined with "
        "several reference files");
  }
  if (cl.num_refs < 1) throw UsageError("--num-refs must be at least 1");
  if (cl.refs.empty()) {
    throw UsageError("I need reference files (before -i/--input): nmt-bleu has no test sets (-t)");
  }
  if (cl.paired_ar && cl.paired_bs) {
    throw UsageError("--paired-ar and --paired-bs are mutually exclusive");
  }
}

int run(CommandLine cl, BleuOptions bleu, const ChrfOptions& chrf, const TerOptions& ter) {
  if (cl.json) cl.format = "json";
  if (const char* env = std::getenv("SACREBLEU_FORMAT")) {
    std::string f = env;
    std::transform(f.begin(), f.end(), f.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (f == "json" || f == "text" || f == "latex") cl.format = f;
  }
  check_combinations(cl);
  const bool paired = cl.paired_ar || cl.paired_bs;
  if (!cl.langpair.empty() && cl.langpair.find('-') == std::string::npos) {
    throw nmt::UsageError("-l/--language-pair wants SRC-TRG (e.g. en-de), got '" + cl.langpair +
                          "'");
  }
  const std::string target = cl.langpair.substr(cl.langpair.find('-') + 1);
  if (!cl.tokenize) {
    bleu.tokenize = target == "zh"   ? "zh"
                    : target == "ja" ? "ja-mecab"
                    : target == "ko" ? "ko-mecab"
                                     : "13a";
  } else {
    bleu.tokenize = *cl.tokenize;
    if (target == "zh" && bleu.tokenize != "zh") {
      spdlog::warn("Consider using the 'zh' or 'spm' tokenizer for Chinese.");
    }
    if (target == "ja")
      spdlog::warn("Consider using the 'ja-mecab' or 'spm' tokenizer for Japanese.");
    if (target == "ko")
      spdlog::warn("Consider using the 'ko-mecab' or 'spm' tokenizer for Korean.");
  }
  bleu.effective_order = cl.sentence_level;
  const auto ref_streams = read_references(cl);
  const Systems systems = read_systems(cl, paired);
  const std::size_t num_sys = systems.lines.size();
  if (cl.sentence_level && num_sys > 1) {
    throw UsageError("Only one system can be evaluated in sentence-level mode.");
  }
  if (cl.sentence_level && (cl.confidence || paired)) {
    throw UsageError("Statistical tests are unavailable in sentence-level mode.");
  }
  if (paired && num_sys == 1) {
    throw UsageError("Paired tests require multiple input systems given to --input (-i).");
  }
  if (num_sys > 1 && cl.confidence) {
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
  MetricSet set;
  try {
    set = make_metrics(cl.metrics, bleu, chrf, ter);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const SegmentReferences refs = gather_references(ref_streams, systems.lines[0].size());
  if (cl.sentence_level) return score_sentences(cl, set, systems, refs);
  if (cl.detail && cl.format == "json") cl.format = "text";
  if (num_sys == 1) return score_one_system(cl, set, systems.lines[0], refs);
  spdlog::info("Found {} systems.", num_sys);
  return score_many_systems(cl, set, systems, refs);
}

void add_options(CLI::App& app, CommandLine& cl, BleuOptions& bleu, ChrfOptions& chrf,
                 TerOptions& ter) {
  for (const char* name : {"--citation", "--cite", "--list"}) {
    app.add_flag_callback(
        name, [&cl, name] { cl.unsupported.push_back(name); }, "Unsupported");
  }
  for (const char* name : {"-t,--test-set", "--origlang", "--subset", "--download"}) {
    app.add_option_function<std::string>(
        name, [&cl, name](const std::string&) { cl.unsupported.push_back(name); }, "Unsupported");
  }
  app.add_option_function<std::vector<std::string>>(
         "--echo", [&cl](const std::vector<std::string>&) { cl.unsupported.push_back("--echo"); },
         "Unsupported")
      ->expected(1, -1);
  app.add_option("-l,--language-pair", cl.langpair, "SRC-TRG: TRG zh selects the zh tokenizer");
  app.add_option("-i,--input", cl.inputs, "System output file(s) (default: stdin, tab-separated)")
      ->expected(0, -1);
  app.add_option("refs", cl.refs, "Reference files, one segment per line (before -i)");
  app.add_option("--num-refs", cl.num_refs, "Split each reference line on tabs into N (-nr)");
  app.add_option("-e,--encoding", cl.encoding, "Input encoding: utf-8 only");
  app.add_option("-m,--metrics", cl.metrics, "Metrics: bleu, chrf, ter (default: bleu)")
      ->check(CLI::IsMember({"bleu", "chrf", "ter"}))
      ->expected(1, -1);
  app.add_flag("--sentence-level", cl.sentence_level, "Score every segment (-sl)");
  app.add_option("-s,--smooth-method", bleu.smooth, "BLEU smoothing: exp, floor, add-k or none")
      ->check(CLI::IsMember({"exp", "floor", "add-k", "none"}));
  app.add_option("--smooth-value", bleu.smooth_value, "floor (0.1) or add-k (1) value (-sv)");
  app.add_option("--tokenize", cl.tokenize, "BLEU tokenizer: 13a, none, intl, char, zh (-tok)")
      ->check(CLI::IsMember({"none", "zh", "13a", "intl", "char", "ja-mecab", "ko-mecab", "spm",
                             "flores101", "flores200", "spBLEU-1K"}));
  app.add_flag("--lowercase", bleu.lowercase, "BLEU: case-insensitive (-lc)");
  app.add_flag("--force", bleu.force, "BLEU: do not warn about tokenized-looking input");
  app.add_option("--chrf-char-order", chrf.char_order, "chrF character n-gram order (-cc)");
  app.add_option("--chrf-word-order", chrf.word_order, "chrF word n-gram order; 2: chrF++ (-cw)");
  app.add_option("--chrf-beta", chrf.beta, "chrF recall weight");
  app.add_flag("--chrf-whitespace", chrf.whitespace, "chrF: keep whitespace in char n-grams");
  app.add_flag("--chrf-lowercase", chrf.lowercase, "chrF: case-insensitive");
  app.add_flag("--chrf-eps-smoothing", chrf.eps_smoothing, "chrF: eps smoothing (chrF++.py)");
  app.add_flag("--ter-case-sensitive", ter.case_sensitive, "TER: keep case");
  app.add_flag("--ter-asian-support", ter.asian_support, "TER: CJK handling");
  app.add_flag("--ter-no-punct", ter.no_punct, "TER: remove punctuation");
  app.add_flag("--ter-normalized", ter.normalized, "TER: Tercom normalization/tokenization");
  app.add_flag("--confidence", cl.confidence, "Bootstrap 95% confidence interval (-ci)");
  app.add_option("--confidence-n", cl.confidence_n, "Bootstrap resamples for -ci (-cin)");
  app.add_flag("--paired-ar", cl.paired_ar, "Paired approximate randomization test (-par)");
  app.add_flag("--paired-bs", cl.paired_bs, "Paired bootstrap resampling test (-pbs)");
  app.add_option("--paired-ar-n", cl.paired_ar_n, "Randomization trials (-parn)");
  app.add_option("--paired-bs-n", cl.paired_bs_n, "Bootstrap resamples (-pbsn)");
  app.add_option("-j,--paired-jobs", cl.paired_jobs, "Accepted; tests run in one thread");
  app.add_flag("--short", cl.short_sig, "Short signatures (-sh)");
  app.add_flag("-b,--score-only", cl.score_only, "Print only the computed score");
  app.add_option("-w,--width", cl.width, "Decimal places")->check(CLI::Range(0, 16));
  app.add_flag("-d,--detail", cl.detail, "Subset details (none without test sets)");
  app.add_flag("--no-color", "Accepted; output is never coloured (-nc)");
  app.add_option("-f,--format", cl.format, "json (default), text or latex (several systems)")
      ->check(CLI::IsMember({"json", "text", "latex"}));
  app.add_flag("--json", cl.json, "nmt-bleu's shorthand for -f json");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "BLEU, chrF/chrF++ and TER with sacreBLEU 2.x's command line, algorithms and "
      "output: nmt-bleu REF [REF...] -i HYP [HYP...] (stdin without -i).",
      "nmt-bleu"};
  CommandLine cl;
  BleuOptions bleu;
  ChrfOptions chrf;
  TerOptions ter;
  nmt::LogOptions log;
  log.tool = "nmt-bleu";
  add_options(app, cl, bleu, chrf, ter);
  app.add_flag_callback(
      "-q,--quiet", [&log] { log.level = "error"; }, "Suppress warnings");
  app.set_version_flag("-V,--version",
                       fmt::format("nmt-bleu (sacreBLEU {} algorithms)", kSacreBleuVersion));
  nmt::add_logging_flags(app, log);
  std::vector<std::string> args;
  try {
    args = argparse_rewrite(argc, argv, app);
  } catch (const UsageError& e) {
    std::cerr << "nmt-bleu: " << e.what() << "\n";
    return nmt::kExitUsage;
  }
  std::vector<char*> rewritten;
  for (auto& arg : args) rewritten.push_back(arg.data());
  return nmt::run_tool(app, log, static_cast<int>(rewritten.size()), rewritten.data(),
                       [&] { return run(cl, bleu, chrf, ter); });
}
