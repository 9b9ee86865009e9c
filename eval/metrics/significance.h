#pragma once
// sacreBLEU 2.x's statistical tests (significance.py; metrics/base.py: Score.estimate_ci), over
// per-segment statistics (metric.h):
//   - bootstrap confidence interval (Koehn 2004): resample the segments with replacement n times,
//     score each resample; mean of the resampled scores, and half the distance between the
//     resampled scores at sorted positions n/40 and n - n/40 - 1 (a 95% interval) as "± ci";
//   - paired bootstrap resampling test: the same resamples for baseline and system; with
//     d_k = |system_k - baseline_k| and delta = |system - baseline| on the full corpus,
//     p = (#{k : d_k - mean(d) > delta} + 1) / (n + 1);
//   - paired approximate randomization (Riezler and Maxwell 2005, after multeval): each trial swaps
//     every segment's statistics between the two systems with probability 1/2,
//     p = (#{t : |A_t - B_t| > delta} + 1) / (n + 1).
// Deliberate deviation: sacreBLEU draws with numpy's default_rng (PCG64); nmt-bleu uses
// std::mt19937_64 seeded with the same seed value, so the statistics agree with sacreBLEU's
// within sampling error, not digit for digit, and are identical run to run for one seed. Segment
// indices are mt19937_64 outputs reduced without bias (OpenBSD arc4random_uniform's rejection:
// draws below 2^64 mod n are redrawn, then taken mod n), n_segments of them per resample; a
// randomization trial takes each segment's coin from the top bit of one draw. Statistics are
// summed in double precision (sacreBLEU sums in float32).

#include <cstdint>
#include <functional>
#include <optional>
#include <random>

#include "eval/metrics/metric.h"

namespace nmt::eval {

inline constexpr int kDefaultBootstrapSamples = 1000;  // --confidence-n, --paired-bs-n
inline constexpr int kDefaultArTrials = 10000;         // --paired-ar-n
inline constexpr std::uint64_t kDefaultSeed = 12345;   // sacreBLEU's SACREBLEU_SEED default

// The score of summed statistics (a Metric's score().score).
using StatsScorer = std::function<double(const StatsRow&)>;

// The seeded generator every test draws from; nullopt seeds from std::random_device.
class Resampler {
 public:
  explicit Resampler(std::optional<std::uint64_t> seed);
  std::size_t below(std::size_t n);  // uniform in [0, n), n > 0
  bool coin();                       // true with probability 1/2

 private:
  std::mt19937_64 engine_;
};

struct Interval {
  double mean = 0.0;  // mean of the resampled scores
  double ci = 0.0;    // half-width of the 95% interval
};

// sacreBLEU's estimate_ci on resampled scores (needs at least one).
Interval estimate_interval(std::vector<double> scores);

// The scores of `samples` bootstrap resamples of `stats` (one row per segment).
std::vector<double> bootstrap_scores(const StatsMatrix& stats, const StatsScorer& scorer,
                                     int samples, std::optional<std::uint64_t> seed);

struct PairedResult {
  double score = 0.0;                // the system's corpus score
  double p_value = 1.0;              // against the baseline
  std::optional<Interval> interval;  // bootstrap test only: the system's mean and 95% CI
};

// Paired bootstrap resampling of `system` against `baseline` (same segments, same metric).
PairedResult paired_bootstrap(const StatsMatrix& baseline, const StatsMatrix& system,
                              const StatsScorer& scorer, int samples,
                              std::optional<std::uint64_t> seed);

// Paired approximate randomization of `system` against `baseline`.
PairedResult paired_randomization(const StatsMatrix& baseline, const StatsMatrix& system,
                                  const StatsScorer& scorer, int trials,
                                  std::optional<std::uint64_t> seed);

}  // namespace nmt::eval
