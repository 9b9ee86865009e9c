#pragma once
// The scoring half of sacrebleu_cli.h: sacreBLEU's inputs (reference files, -nr tab splitting,
// systems from files or tab-separated stdin) and its three ways of scoring them (sentence level,
// one system, several systems with optional paired tests), printed as sacreBLEU prints them.

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "eval/metrics/metric.h"
#include "eval/metrics/sacrebleu_cli.h"

namespace nmt::eval {

// The systems to score: their display names and lines, in the order given.
struct SacreBleuSystems {
  std::vector<std::string> names;
  std::vector<std::vector<std::string>> lines;
};

// One stream per reference (-nr N splits each line of one file on tabs into N streams).
std::vector<std::vector<std::string>> read_sacrebleu_references(const SacreBleuArgs& args);

// The systems of -i, or of `in` (one per tab-separated field) without it; `paired` names the
// first one the baseline, as sacreBLEU does.
SacreBleuSystems read_sacrebleu_systems(const SacreBleuArgs& args, bool paired, std::istream& in);

// Metrics by sacreBLEU's names, in the order given, duplicates dropped.
struct MetricSet {
  std::vector<std::string> keys;  // BLEU, CHRF, TER
  std::vector<std::unique_ptr<Metric>> metrics;
};

// std::invalid_argument for a bad metric option (a tokenizer that is not built in, ...).
MetricSet make_metrics(const SacreBleuArgs& args);

// -sl: one score line per segment of the single system.
int score_sentences(const SacreBleuArgs& args, const MetricSet& set,
                    const SacreBleuSystems& systems, const SegmentReferences& refs,
                    std::ostream& out);

// One system: a result per metric, with -ci's bootstrap interval.
int score_one_system(const SacreBleuArgs& args, const MetricSet& set,
                     const std::vector<std::string>& hyps, const SegmentReferences& refs,
                     std::ostream& out);

// Several systems: sacreBLEU's table, with -pbs or -par tests against the first.
int score_many_systems(const SacreBleuArgs& args, const MetricSet& set,
                       const SacreBleuSystems& systems, const SegmentReferences& refs,
                       std::ostream& out);

}  // namespace nmt::eval
