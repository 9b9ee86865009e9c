// Adam (paper section 5.3) as one fused kernel: the same updates and checkpoint state as
// LibTorch's Adam.

#include <ATen/ops/randn.h>

#include <cstdint>
#include <vector>

#include "test_utils.h"
#include "trainer/optim/adam_state.h"
#include "trainer/optim/fused_adam.h"

namespace nmt {
namespace {

// Random parameters with random gradients, three of different shapes, the same for both copies.
std::vector<at::Tensor> adam_parameters(std::uint64_t seed) {
  at::manual_seed(seed);
  std::vector<at::Tensor> ps;
  for (const auto& shape : std::vector<std::vector<std::int64_t>>{{4, 3}, {7}, {2, 2, 5}}) {
    ps.push_back(at::randn(shape).set_requires_grad(true));
  }
  return ps;
}

TEST(FusedAdam, SameUpdatesAsLibTorchsAdamAndTheSameState) {
  if (!optim::fused_adam_available(c10::kCPU)) {
    GTEST_SKIP() << "this LibTorch line has no fused Adam on the CPU (the current line has)";
  }
  auto fused_params = adam_parameters(5), plain_params = adam_parameters(5);
  optim::AdamSettings settings;
  optim::FusedAdam fused(fused_params, settings);
  settings.allow_fused = false;
  optim::FusedAdam plain(plain_params, settings);
  ASSERT_TRUE(fused.fused());
  ASSERT_FALSE(plain.fused());
  for (int step = 1; step <= 4; ++step) {
    at::manual_seed(100 + step);
    for (std::size_t i = 0; i < fused_params.size(); ++i) {
      const auto g = at::randn(fused_params[i].sizes());
      fused_params[i].mutable_grad() = g.clone();
      plain_params[i].mutable_grad() = g.clone();
    }
    fused.step(1e-2 / step);
    plain.step(1e-2 / step);
  }
  for (std::size_t i = 0; i < fused_params.size(); ++i) {
    EXPECT_TRUE(at::allclose(fused_params[i], plain_params[i], 1e-5, 1e-6)) << i;
    EXPECT_FALSE(at::allclose(fused_params[i], adam_parameters(5)[i], 1e-3, 1e-3)) << "moved";
  }
  // The state a checkpoint saves: same step counts and moments.
  for (std::size_t i = 0; i < fused_params.size(); ++i) {
    const auto& a = static_cast<const torch::optim::AdamParamState&>(
        *fused.state().state().at(optim::adam_state_key(fused.state().state(), fused_params[i])));
    const auto& b = static_cast<const torch::optim::AdamParamState&>(
        *plain.state().state().at(optim::adam_state_key(plain.state().state(), plain_params[i])));
    EXPECT_EQ(a.step(), 4);
    EXPECT_EQ(b.step(), 4);
    EXPECT_TRUE(at::allclose(a.exp_avg_sq(), b.exp_avg_sq(), 1e-5, 1e-8)) << i;
  }
}

}  // namespace
}  // namespace nmt
