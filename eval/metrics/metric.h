#pragma once
// The shape every sacreBLEU metric shares (metrics/base.py: Metric), over which nmt-bleu's
// sentence scores, bootstrap confidence intervals and paired tests run: per-segment sufficient
// statistics that add up over segments, and a score computed from summed statistics. BLEU, chrF
// and TER are wrapped as such; statistics travel as doubles (counts stay exact below 2^53).

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "eval/metrics/bleu.h"
#include "eval/metrics/chrf.h"
#include "eval/metrics/signature.h"
#include "eval/metrics/ter.h"

namespace nmt::eval {

using StatsRow = std::vector<double>;
using StatsMatrix = std::vector<StatsRow>;  // [segment][statistic]

struct MetricScore {
  std::string name;     // as printed: BLEU, chrF2, chrF2++, TER
  double score = 0.0;   // 0..100
  std::string verbose;  // BLEU's precisions and lengths, empty for the others
};

class Metric {
 public:
  virtual ~Metric() = default;
  virtual std::string name() const = 0;
  // Statistics of one raw hypothesis against its raw references.
  virtual StatsRow segment_stats(std::string_view hypothesis,
                                 const std::vector<std::string_view>& references) const = 0;
  // The score of statistics summed over any set of segments.
  virtual MetricScore score(const StatsRow& summed) const = 0;
  // Signature fields, without the resampling ones (a test adds those).
  virtual Signature signature(const std::string& nrefs) const = 0;
  // BLEU without --force: count hypotheses that end in " ." (sacreBLEU warns at 100).
  virtual bool warns_tokenized() const { return false; }
};

// Options are validated here (std::invalid_argument).
std::unique_ptr<Metric> make_bleu_metric(const BleuOptions& options);
std::unique_ptr<Metric> make_chrf_metric(const ChrfOptions& options);
std::unique_ptr<Metric> make_ter_metric(const TerOptions& options);

// Statistics of every segment.
StatsMatrix corpus_stats(const Metric& metric, const std::vector<std::string>& hypotheses,
                         const SegmentReferences& references);

// Sum of all rows, in order (sacreBLEU's sum_of_lists).
StatsRow sum_rows(const StatsMatrix& stats);

}  // namespace nmt::eval
