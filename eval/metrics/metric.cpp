// BLEU, chrF and TER behind the Metric interface (see metric.h).

#include "eval/metrics/metric.h"

#include <cmath>
#include <stdexcept>

namespace nmt::eval {
namespace {

class BleuMetric : public Metric {
 public:
  explicit BleuMetric(BleuOptions options) : options_(std::move(options)) { options_.validate(); }
  std::string name() const override { return "BLEU"; }
  StatsRow segment_stats(std::string_view hypothesis,
                         const std::vector<std::string_view>& references) const override {
    const BleuStats s = bleu_segment_stats(hypothesis, references, options_);
    StatsRow row{static_cast<double>(s.hyp_len), static_cast<double>(s.ref_len)};
    for (const auto c : s.correct) row.push_back(static_cast<double>(c));
    for (const auto t : s.total) row.push_back(static_cast<double>(t));
    return row;
  }
  MetricScore score(const StatsRow& summed) const override {
    // sacreBLEU's int(stats[0]) for the lengths; counts are whole numbers anyway.
    const auto whole = [](double x) { return static_cast<std::int64_t>(std::llround(x)); };
    BleuStats s;
    s.hyp_len = whole(summed.at(0));
    s.ref_len = whole(summed.at(1));
    for (int n = 0; n < kBleuMaxOrder; ++n) {
      s.correct[n] = whole(summed.at(2 + n));
      s.total[n] = whole(summed.at(2 + kBleuMaxOrder + n));
    }
    const BleuScore score = bleu_from_stats(s, options_);
    return {"BLEU", score.score, score.verbose()};
  }
  Signature signature(const std::string& nrefs) const override {
    return bleu_signature_fields(options_, nrefs);
  }
  bool warns_tokenized() const override { return !options_.force; }

 private:
  BleuOptions options_;
};

class ChrfMetric : public Metric {
 public:
  explicit ChrfMetric(ChrfOptions options) : options_(options) { options_.validate(); }
  std::string name() const override { return chrf_name(options_); }
  StatsRow segment_stats(std::string_view hypothesis,
                         const std::vector<std::string_view>& references) const override {
    const ChrfStats s = chrf_segment_stats(hypothesis, references, options_);
    return StatsRow(s.begin(), s.end());
  }
  MetricScore score(const StatsRow& summed) const override {
    ChrfStats s;
    for (const double x : summed) s.push_back(static_cast<std::int64_t>(std::llround(x)));
    return {name(), chrf_from_stats(s, options_), ""};
  }
  Signature signature(const std::string& nrefs) const override {
    return chrf_signature_fields(options_, nrefs);
  }

 private:
  ChrfOptions options_;
};

class TerMetric : public Metric {
 public:
  explicit TerMetric(TerOptions options) : options_(options) {}
  std::string name() const override { return "TER"; }
  StatsRow segment_stats(std::string_view hypothesis,
                         const std::vector<std::string_view>& references) const override {
    const TerStats s = ter_segment_stats(hypothesis, references, options_);
    return {s[0], s[1]};
  }
  MetricScore score(const StatsRow& summed) const override {
    return {"TER", ter_from_stats({summed.at(0), summed.at(1)}).score, ""};
  }
  Signature signature(const std::string& nrefs) const override {
    return ter_signature_fields(options_, nrefs);
  }

 private:
  TerOptions options_;
};

}  // namespace

std::unique_ptr<Metric> make_bleu_metric(const BleuOptions& options) {
  return std::make_unique<BleuMetric>(options);
}
std::unique_ptr<Metric> make_chrf_metric(const ChrfOptions& options) {
  return std::make_unique<ChrfMetric>(options);
}
std::unique_ptr<Metric> make_ter_metric(const TerOptions& options) {
  return std::make_unique<TerMetric>(options);
}

StatsMatrix corpus_stats(const Metric& metric, const std::vector<std::string>& hypotheses,
                         const SegmentReferences& references) {
  if (references.segments.size() != hypotheses.size()) {
    throw std::invalid_argument("corpus_stats: one reference set per hypothesis expected");
  }
  StatsMatrix stats;
  stats.reserve(hypotheses.size());
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    stats.push_back(metric.segment_stats(hypotheses[i], references.segments[i]));
  }
  return stats;
}

StatsRow sum_rows(const StatsMatrix& stats) {
  if (stats.empty()) return {};
  StatsRow total(stats.front().size(), 0.0);
  for (const auto& row : stats) {
    for (std::size_t k = 0; k < total.size(); ++k) total[k] += row[k];
  }
  return total;
}

}  // namespace nmt::eval
