// Bootstrap intervals and paired tests (see significance.h).

#include "eval/metrics/significance.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <utility>

namespace nmt::eval {
namespace {

void check_pair(const StatsMatrix& baseline, const StatsMatrix& system, int samples) {
  if (baseline.empty() || baseline.size() != system.size()) {
    throw std::invalid_argument("paired test: both systems need the same, non-zero, segments");
  }
  if (samples <= 0) throw std::invalid_argument("paired test: the number of samples must be > 0");
}

void add_row(StatsRow& total, const StatsRow& row) {
  for (std::size_t k = 0; k < total.size(); ++k) total[k] += row[k];
}

// sacreBLEU's _compute_p_value: the share of samples strictly above the real difference, +1
// on both sides.
double p_value(const std::vector<double>& sample_stats, double real_difference) {
  const auto above = std::count_if(sample_stats.begin(), sample_stats.end(),
                                   [&](double s) { return s > real_difference; });
  return static_cast<double>(above + 1) / static_cast<double>(sample_stats.size() + 1);
}

// The differences a paired test holds the real one against.
struct PairedSamples {
  double real_difference = 0;  // |score(baseline) - score(system)|
  std::vector<double> diffs;   // one per trial
};

// `trials` paired resamplings of the segments: each adds, segment by segment, the two rows that
// `pick(rng, i)` returns into two corpus totals, and keeps `diff(first, second)` of the totals.
template <typename Pick, typename Diff>
PairedSamples resample_pairs(const StatsMatrix& baseline, const StatsMatrix& system,
                             const StatsScorer& scorer, int trials,
                             std::optional<std::uint64_t> seed, Pick pick, Diff diff) {
  check_pair(baseline, system, trials);
  PairedSamples out;
  out.real_difference = std::abs(scorer(sum_rows(baseline)) - scorer(sum_rows(system)));
  out.diffs.reserve(static_cast<std::size_t>(trials));
  Resampler rng(seed);
  for (int t = 0; t < trials; ++t) {
    StatsRow first(baseline.front().size(), 0.0), second(system.front().size(), 0.0);
    for (std::size_t i = 0; i < baseline.size(); ++i) {
      const auto [first_row, second_row] = pick(rng, i);
      add_row(first, *first_row);
      add_row(second, *second_row);
    }
    out.diffs.push_back(diff(first, second));
  }
  return out;
}

PairedResult paired_result(const StatsMatrix& system, const StatsScorer& scorer,
                           const PairedSamples& samples) {
  PairedResult out;
  out.score = scorer(sum_rows(system));
  out.p_value = p_value(samples.diffs, samples.real_difference);
  return out;
}

}  // namespace

Resampler::Resampler(std::optional<std::uint64_t> seed)
    : engine_(seed ? *seed
                   : (static_cast<std::uint64_t>(std::random_device{}()) << 32) ^
                         std::random_device{}()) {}

std::size_t Resampler::below(std::size_t n) {
  const auto bound = static_cast<std::uint64_t>(n);
  const std::uint64_t threshold = (0 - bound) % bound;  // 2^64 mod n
  std::uint64_t r;
  do {
    r = engine_();
  } while (r < threshold);
  return static_cast<std::size_t>(r % bound);
}

bool Resampler::coin() {
  return (engine_() >> 63) != 0;
}

Interval estimate_interval(std::vector<double> scores) {
  if (scores.empty()) throw std::invalid_argument("estimate_interval: no scores");
  std::sort(scores.begin(), scores.end());
  const std::size_t n = scores.size();
  const std::size_t lower = n / 40, upper = n - lower - 1;
  Interval out;
  out.ci = 0.5 * (scores[upper] - scores[lower]);
  out.mean = std::accumulate(scores.begin(), scores.end(), 0.0) / static_cast<double>(n);
  return out;
}

std::vector<double> bootstrap_scores(const StatsMatrix& stats, const StatsScorer& scorer,
                                     int samples, std::optional<std::uint64_t> seed) {
  if (stats.empty()) throw std::invalid_argument("bootstrap: no segments");
  if (samples <= 0) throw std::invalid_argument("bootstrap: the number of resamples must be > 0");
  Resampler rng(seed);
  std::vector<double> scores;
  scores.reserve(static_cast<std::size_t>(samples));
  for (int s = 0; s < samples; ++s) {
    StatsRow total(stats.front().size(), 0.0);
    for (std::size_t i = 0; i < stats.size(); ++i) add_row(total, stats[rng.below(stats.size())]);
    scores.push_back(scorer(total));
  }
  return scores;
}

PairedResult paired_bootstrap(const StatsMatrix& baseline, const StatsMatrix& system,
                              const StatsScorer& scorer, int samples,
                              std::optional<std::uint64_t> seed) {
  std::vector<double> system_scores;
  PairedSamples resampled = resample_pairs(
      baseline, system, scorer, samples, seed,
      [&](Resampler& rng, std::size_t) {
        const std::size_t k = rng.below(baseline.size());
        return std::pair{&baseline[k], &system[k]};
      },
      [&](const StatsRow& bl, const StatsRow& sys) {
        system_scores.push_back(scorer(sys));
        return std::abs(system_scores.back() - scorer(bl));
      });
  auto& diffs = resampled.diffs;
  const double mean_diff =
      std::accumulate(diffs.begin(), diffs.end(), 0.0) / static_cast<double>(diffs.size());
  for (double& d : diffs) d -= mean_diff;
  PairedResult out = paired_result(system, scorer, resampled);
  out.interval = estimate_interval(system_scores);
  return out;
}

PairedResult paired_randomization(const StatsMatrix& baseline, const StatsMatrix& system,
                                  const StatsScorer& scorer, int trials,
                                  std::optional<std::uint64_t> seed) {
  const PairedSamples resampled = resample_pairs(
      baseline, system, scorer, trials, seed,
      [&](Resampler& rng, std::size_t i) {
        const bool keep = rng.coin();
        return keep ? std::pair{&baseline[i], &system[i]} : std::pair{&system[i], &baseline[i]};
      },
      [&](const StatsRow& a, const StatsRow& b) { return std::abs(scorer(a) - scorer(b)); });
  return paired_result(system, scorer, resampled);
}

}  // namespace nmt::eval
