// Bootstrap intervals and paired tests (significance.h): sacreBLEU's estimate_ci on known lists,
// p-value conventions (+1 on both sides, strict comparison), reproducibility for one seed, and
// the decisions on clearly different and identical systems. Sampling itself is nmt-bleu's
// (std::mt19937_64), so no digit of numpy's draws is expected.

#include <gtest/gtest.h>

#include <set>

#include "eval/metrics/metric.h"
#include "eval/metrics/significance.h"

namespace nmt::eval {
namespace {

// A toy metric: the mean of the first statistic over the second, times 100.
double ratio_score(const StatsRow& s) {
  return s[1] > 0 ? 100 * s[0] / s[1] : 0.0;
}

StatsMatrix segments(int n, int correct_every) {
  StatsMatrix m;
  for (int i = 0; i < n; ++i) m.push_back({i % correct_every == 0 ? 0.0 : 1.0, 1.0});
  return m;
}

TEST(Significance, EstimateIntervalFollowsSacreBleu) {
  // 40 values 0..39: lower index 40/40 = 1, upper 40 - 1 - 1 = 38; ci = (38 - 1) / 2.
  std::vector<double> v;
  for (int i = 39; i >= 0; --i) v.push_back(i);
  const Interval iv = estimate_interval(v);
  EXPECT_DOUBLE_EQ(iv.mean, 19.5);
  EXPECT_DOUBLE_EQ(iv.ci, 18.5);
  EXPECT_DOUBLE_EQ(estimate_interval({5.0}).ci, 0.0);
}

TEST(Significance, ResamplerIsUniformAndReproducible) {
  Resampler a(12345), b(12345);
  std::set<std::size_t> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::size_t x = a.below(7);
    EXPECT_EQ(x, b.below(7));
    EXPECT_LT(x, 7u);
    seen.insert(x);
  }
  EXPECT_EQ(seen.size(), 7u);
}

TEST(Significance, BootstrapIsReproducibleAndCentred) {
  const StatsMatrix stats = segments(500, 4);  // 75% correct
  const auto s1 = bootstrap_scores(stats, ratio_score, 200, 12345);
  const auto s2 = bootstrap_scores(stats, ratio_score, 200, 12345);
  EXPECT_EQ(s1, s2);
  EXPECT_NE(s1, bootstrap_scores(stats, ratio_score, 200, 54321));
  const Interval iv = estimate_interval(s1);
  EXPECT_NEAR(iv.mean, 75.0, 1.0);
  // Binomial sd of a 500-sample mean at p = 0.75 is 1.94 points: a 95% half-width near 3.8.
  EXPECT_GT(iv.ci, 2.5);
  EXPECT_LT(iv.ci, 5.0);
  // Constant statistics: every resample scores the same.
  const StatsMatrix constant(50, StatsRow{1.0, 2.0});
  EXPECT_DOUBLE_EQ(estimate_interval(bootstrap_scores(constant, ratio_score, 100, 1)).ci, 0.0);
}

TEST(Significance, PairedTestsSeparateDifferentSystems) {
  const StatsMatrix baseline = segments(400, 2);  // 50% correct
  const StatsMatrix better = segments(400, 10);   // 90% correct
  const auto bs = paired_bootstrap(baseline, better, ratio_score, 1000, 12345);
  EXPECT_NEAR(bs.score, 90.0, 0.5);
  EXPECT_DOUBLE_EQ(bs.p_value, 1.0 / 1001);  // no resample beats a 40-point difference
  ASSERT_TRUE(bs.interval.has_value());
  EXPECT_NEAR(bs.interval->mean, 90.0, 1.0);
  const auto ar = paired_randomization(baseline, better, ratio_score, 2000, 12345);
  EXPECT_DOUBLE_EQ(ar.p_value, 1.0 / 2001);
  EXPECT_FALSE(ar.interval.has_value());
  // Same seed, same numbers.
  EXPECT_EQ(paired_bootstrap(baseline, better, ratio_score, 1000, 12345).p_value, bs.p_value);
}

TEST(Significance, PairedTestsOnNearIdenticalSystems) {
  // Identical systems: every randomized difference is 0, not > 0, so p = 1 / (n + 1), as in
  // sacreBLEU (multeval's convention).
  const StatsMatrix sys = segments(300, 3);
  EXPECT_DOUBLE_EQ(paired_randomization(sys, sys, ratio_score, 999, 7).p_value, 1.0 / 1000);
  // One differing segment: every trial shows the same |difference|, never more, so again
  // p = 1 / (n + 1) (a quirk of the convention, shared with sacreBLEU).
  StatsMatrix one = sys;
  one[0][0] = 1.0 - one[0][0];
  EXPECT_DOUBLE_EQ(paired_randomization(sys, one, ratio_score, 999, 7).p_value, 1.0 / 1000);
  // 20 differing segments (7 gain, 13 lose a match): a 2-point delta that random swaps exceed
  // about 12% of the time (20 fair +-1 coins): not significant.
  StatsMatrix other = sys;
  for (std::size_t i = 0; i < 20; ++i) other[i][0] = 1.0 - other[i][0];
  EXPECT_GT(paired_randomization(sys, other, ratio_score, 2000, 7).p_value, 0.05);
  EXPECT_GT(paired_bootstrap(sys, other, ratio_score, 1000, 7).p_value, 0.05);
}

TEST(Significance, WorksOnRealMetrics) {
  const auto bleu = make_bleu_metric({});
  const std::vector<std::string> hyps = {"the cat sat on the mat", "a dog ran", "hello world"};
  // SegmentReferences views into the streams, which must outlive it.
  const std::vector<std::vector<std::string>> streams = {
      {"the cat sat on the mat", "a dog ran away", "hello big world"}};
  const SegmentReferences refs = gather_references(streams, 3);
  const StatsMatrix stats = corpus_stats(*bleu, hyps, refs);
  ASSERT_EQ(stats.size(), 3u);
  ASSERT_EQ(stats[0].size(), 10u);  // hyp_len, ref_len, 4 matches, 4 totals
  const double corpus = bleu->score(sum_rows(stats)).score;
  EXPECT_NEAR(corpus, corpus_bleu(hyps, streams, {}).score.score, 1e-12);
  const auto scores = bootstrap_scores(
      stats, [&](const StatsRow& s) { return bleu->score(s).score; }, 50, 12345);
  EXPECT_EQ(scores.size(), 50u);
}

}  // namespace
}  // namespace nmt::eval
