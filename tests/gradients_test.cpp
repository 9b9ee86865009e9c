// The gradient norm and clipping to a maximum norm.

#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>

#include "test_utils.h"
#include "trainer/optim/gradients.h"

namespace nmt {
namespace {

TEST(Gradients, ClippingScalesToTheMaximumNormOnlyWhenAbove) {
  auto p = at::zeros({2}).set_requires_grad(true);
  auto q = at::zeros({1}).set_requires_grad(true);
  p.mutable_grad() = at::tensor({3.0f, 0.0f});
  q.mutable_grad() = at::tensor({4.0f});
  EXPECT_NEAR(optim::gradient_norm({p, q}).item<double>(), 5.0, 1e-6);
  optim::clip_gradient_norm({p, q}, 10.0);
  EXPECT_NEAR(optim::gradient_norm({p, q}).item<double>(), 5.0, 1e-6) << "below: untouched";
  optim::clip_gradient_norm({p, q}, 1.0);
  EXPECT_NEAR(optim::gradient_norm({p, q}).item<double>(), 1.0, 1e-5);
  EXPECT_NEAR(p.grad()[0].item<double>() / q.grad()[0].item<double>(), 0.75, 1e-6) << "direction";
}

}  // namespace
}  // namespace nmt
