// sacreBLEU's inputs and scoring modes (see sacrebleu_scoring.h), as sacrebleu.py and
// sacrebleu/utils.py do them.

#include "eval/metrics/sacrebleu_scoring.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "eval/metrics/python_str.h"
#include "eval/metrics/report.h"
#include "eval/metrics/significance.h"

namespace nmt::eval {
namespace {

// The most text read from one file or stdin: a test set is megabytes; a larger input (an endless
// device, a pipe that never ends) is an error naming it, not a process that fills the memory.
constexpr std::size_t kMaxTextBytes = std::size_t{1} << 30;

// All of `in` (a file, a pipe, stdin), at most kMaxTextBytes; `name` names it in the error.
std::string read_bounded(std::istream& in, const std::string& name) {
  std::string data;
  std::vector<char> buffer(1 << 16);
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0) {
    data.append(buffer.data(), static_cast<std::size_t>(in.gcount()));
    if (data.size() > kMaxTextBytes) {
      throw std::runtime_error(
          fmt::format("{} holds more than {} bytes: not a text to score", name, kMaxTextBytes));
    }
  }
  return data;
}

std::vector<std::string> read_file_lines(const std::string& path, const std::string& role) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot open {} file '{}'", role, path));
  const std::string name = fmt::format("{} file '{}'", role, path);
  return split_lines(read_bounded(in, name), name, false);
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

}  // namespace

std::vector<std::vector<std::string>> read_sacrebleu_references(const SacreBleuArgs& args) {
  std::vector<std::vector<std::string>> refs(
      std::max<std::size_t>(args.refs.size(), args.num_refs));
  for (std::size_t r = 0; r < args.refs.size(); ++r) {
    const auto lines = read_file_lines(args.refs[r], "reference");
    for (std::size_t n = 0; n < lines.size(); ++n) {
      if (args.num_refs == 1) {
        refs[r].push_back(lines[n]);
        continue;
      }
      const auto fields = split_tabs(lines[n], static_cast<std::size_t>(args.num_refs));
      if (fields.size() != static_cast<std::size_t>(args.num_refs)) {
        throw std::runtime_error(fmt::format("{}: line {}: expected {} fields, but found {}",
                                             args.refs[r], n + 1, args.num_refs, fields.size()));
      }
      for (std::size_t k = 0; k < fields.size(); ++k) refs[k].push_back(fields[k]);
    }
  }
  return refs;
}

SacreBleuSystems read_sacrebleu_systems(const SacreBleuArgs& args, bool paired, std::istream& in) {
  SacreBleuSystems out;
  if (!args.inputs) {
    // stdin: one system per tab-separated field, their number fixed by the first line.
    auto lines = split_lines(read_bounded(in, "<stdin>"), "<stdin>", /*universal_newlines=*/true);
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
  for (const auto& path : *args.inputs) {
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

MetricSet make_metrics(const SacreBleuArgs& args) {
  MetricSet set;
  for (const auto& name : args.metrics) {
    const std::string key = name == "bleu" ? "BLEU" : name == "chrf" ? "CHRF" : "TER";
    if (std::find(set.keys.begin(), set.keys.end(), key) != set.keys.end()) continue;
    set.keys.push_back(key);
    if (key == "BLEU") set.metrics.push_back(make_bleu_metric(args.bleu));
    if (key == "CHRF") set.metrics.push_back(make_chrf_metric(args.chrf));
    if (key == "TER") set.metrics.push_back(make_ter_metric(args.ter));
  }
  return set;
}

int score_sentences(const SacreBleuArgs& args, const MetricSet& set,
                    const SacreBleuSystems& systems, const SegmentReferences& refs,
                    std::ostream& out) {
  const Metric& metric = *set.metrics.front();
  for (std::size_t i = 0; i < systems.lines[0].size(); ++i) {
    const StatsRow stats = metric.segment_stats(systems.lines[0][i], refs.segments[i]);
    const std::string sig =
        metric.signature(std::to_string(refs.segments[i].size())).format(args.short_sig);
    out << format_score(metric.score(stats), args.width, args.score_only, sig, false) << "\n";
  }
  return 0;
}

int score_one_system(const SacreBleuArgs& args, const MetricSet& set,
                     const std::vector<std::string>& hyps, const SegmentReferences& refs,
                     std::ostream& out) {
  const bool json = args.format == "json";
  std::vector<std::string> lines;
  for (const std::size_t m : sorted_order(set)) {
    const Metric& metric = *set.metrics[m];
    warn_tokenized(metric, hyps);
    const StatsMatrix stats = corpus_stats(metric, hyps, refs);
    Signature sig = metric.signature(refs.nrefs);
    std::optional<Interval> interval;
    if (args.confidence && args.confidence_n > 1) {
      const Seed seed = read_seed();
      interval = estimate_interval(bootstrap_scores(
          stats, [&](const StatsRow& s) { return metric.score(s).score; }, args.confidence_n,
          seed.value));
      sig.bootstrap = args.confidence_n;
      sig.seed = seed.text;
    }
    lines.push_back(format_score(metric.score(sum_rows(stats)), args.width, args.score_only,
                                 sig.format(args.short_sig && !json), json, interval));
  }
  out << single_results(lines, json);
  if (args.detail) out << "No subset information found. Consider using --origlang argument.\n";
  return 0;
}

int score_many_systems(const SacreBleuArgs& args, const MetricSet& set,
                       const SacreBleuSystems& systems, const SegmentReferences& refs,
                       std::ostream& out) {
  ResultsTable table;
  table.systems = systems.names;
  const bool paired = args.paired_bs || args.paired_ar;
  table.paired = paired;
  std::optional<PairedTestInfo> info;
  // sacreBLEU runs its default for a count <= 0 but prints the count given in the notes.
  const int given = args.paired_bs ? args.paired_bs_n : args.paired_ar_n;
  const int samples = given > 0        ? given
                      : args.paired_bs ? kDefaultBootstrapSamples
                                       : kDefaultArTrials;
  if (paired) info = PairedTestInfo{args.paired_bs, given};
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
      if (args.paired_bs) {
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
            args.paired_bs ? paired_bootstrap(stats[0], stats[s], scorer, samples, test_seed)
                           : paired_randomization(stats[0], stats[s], scorer, samples, test_seed);
        cells.push_back({r.score, r.p_value, r.interval});
      }
    }
    table.metrics.push_back(metric.name());
    table.cells.push_back(std::move(cells));
    table.signatures.emplace_back(metric.name(), sig.format(args.short_sig));
  }
  out << results_table(table, output_format(args.format), args.width, info);
  return 0;
}

}  // namespace nmt::eval
