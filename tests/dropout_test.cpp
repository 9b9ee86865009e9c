// Dropout's parallel CPU mask (trainer/model/dropout.h): values, rate, unbiasedness, repeatability
// under torch::manual_seed, independence from the thread count, and the gradient it passes.

#include <ATen/Parallel.h>
#include <ATen/ops/equal.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/randn.h>
#include <gtest/gtest.h>
#include <torch/nn/modules/dropout.h>

#include <cmath>
#include <cstdint>

#include "trainer/model/dropout.h"

namespace nmt::model {
namespace {

TEST(DropoutMask, ValuesAreZeroOrTheScaleAtTheRequestedRate) {
  const double p = 0.3;
  const std::int64_t n = 1 << 20;
  const auto mask = dropout_mask(torch::empty({n}), p, 12345);
  const auto dropped = (mask == 0).sum().item<double>() / static_cast<double>(n);
  const float scale = 65536.0f / static_cast<float>(65536 - std::lround(p * 65536));
  EXPECT_TRUE(((mask == 0) | (mask == scale)).all().item<bool>());
  // One standard deviation of the rate is sqrt(p(1-p)/n) = 0.00045: 0.005 is 11 of them.
  EXPECT_NEAR(dropped, p, 0.005);
  EXPECT_NEAR(mask.mean().item<double>(), 1.0, 0.01);
}

TEST(DropoutMask, NeighboursAndSeedsAreIndependent) {
  const std::int64_t n = 1 << 20;
  const auto a = dropout_mask(torch::empty({n}), 0.5, 1) == 0;
  const auto b = dropout_mask(torch::empty({n}), 0.5, 2) == 0;
  // Two independent fair masks agree on half the elements; so do an element and its neighbour.
  EXPECT_NEAR((a == b).to(torch::kDouble).mean().item<double>(), 0.5, 0.005);
  const auto left = a.slice(0, 0, n - 1), right = a.slice(0, 1, n);
  EXPECT_NEAR((left == right).to(torch::kDouble).mean().item<double>(), 0.5, 0.005);
}

TEST(DropoutMask, SameSeedSameMaskForAnyNumberOfThreads) {
  const int threads = at::get_num_threads();
  at::set_num_threads(1);
  const auto one = dropout_mask(torch::empty({3, 1001, 37}), 0.1, 99);
  at::set_num_threads(4);
  const auto four = dropout_mask(torch::empty({3, 1001, 37}), 0.1, 99);
  at::set_num_threads(threads);
  EXPECT_TRUE(torch::equal(one, four));
  EXPECT_FALSE(torch::equal(one, dropout_mask(torch::empty({3, 1001, 37}), 0.1, 100)));
}

TEST(DropoutMask, TakesTheInputsTypeAndRejectsBadRates) {
  const auto half = dropout_mask(torch::empty({64, 64}, torch::kBFloat16), 0.25, 7);
  EXPECT_EQ(half.scalar_type(), torch::kBFloat16);
  const auto scale = torch::scalar_tensor(65536.0 / 49152.0).to(torch::kBFloat16);  // rounded
  EXPECT_TRUE(((half == 0) | (half == scale)).all().item<bool>());
  EXPECT_GT((half == 0).sum().item<std::int64_t>(), 0);
  EXPECT_THROW(dropout_mask(torch::empty({4}), 1.0, 1), std::invalid_argument);
  EXPECT_THROW(dropout_mask(torch::empty({4}), -0.1, 1), std::invalid_argument);
  EXPECT_THROW(Dropout(1.0), std::invalid_argument);
}

TEST(Dropout, IdentityInEvalModeAndAtZero) {
  const auto x = torch::randn({8, 16});
  Dropout dropout(0.4);
  dropout->eval();
  EXPECT_TRUE(dropout->forward(x).is_same(x));
  Dropout none(0.0);
  EXPECT_TRUE(none->forward(x).is_same(x));
}

TEST(Dropout, RepeatsUnderManualSeedAndPassesTheMaskedGradient) {
  Dropout dropout(0.3);
  auto x = torch::randn({50, 40}).requires_grad_(true);
  torch::manual_seed(5);
  const auto y = dropout->forward(x);
  torch::manual_seed(5);
  EXPECT_TRUE(torch::equal(y, dropout->forward(x)));
  EXPECT_FALSE(torch::equal(y, dropout->forward(x)));  // the generator moved on
  y.sum().backward();
  // d/dx sum(x * mask) = mask, and y = x * mask, so the gradient is y / x where y != 0.
  const auto kept = y != 0;
  EXPECT_TRUE(torch::allclose(x.grad().masked_select(kept), (y / x).detach().masked_select(kept),
                              1e-5, 1e-6));
  EXPECT_TRUE((x.grad().masked_select(~kept) == 0).all().item<bool>());
}

TEST(Dropout, KeepsTheRateOfLibTorchsDropout) {
  // Same expected rate and scale as torch::nn::Dropout: over 2^20 elements both drop 30% +- 0.5%.
  const auto x = torch::ones({1 << 20});
  torch::nn::Dropout reference(0.3);
  Dropout ours(0.3);
  const auto rate = [](const torch::Tensor& y) {
    return (y == 0).to(torch::kDouble).mean().item<double>();
  };
  EXPECT_NEAR(rate(reference->forward(x)), 0.3, 0.005);
  EXPECT_NEAR(rate(ours->forward(x)), 0.3, 0.005);
  EXPECT_NEAR(ours->forward(x).mean().item<double>(), reference->forward(x).mean().item<double>(),
              0.02);
}

}  // namespace
}  // namespace nmt::model
