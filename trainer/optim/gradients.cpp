#include "trainer/optim/gradients.h"

#include <ATen/ops/_foreach_norm.h>
#include <ATen/ops/stack.h>

namespace nmt::optim {

std::vector<at::Tensor> gradients_of(const std::vector<at::Tensor>& parameters) {
  std::vector<at::Tensor> grads;
  for (const auto& p : parameters) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  return grads;
}

at::Tensor gradient_norm(const std::vector<at::Tensor>& parameters) {
  const auto grads = gradients_of(parameters);
  if (grads.empty()) return {};
  const auto norms = at::_foreach_norm(grads, 2);  // one per gradient, each 0-dim
  return at::stack(norms).to(at::kFloat).norm();   // 0-dim
}

void clip_gradient_norm(const std::vector<at::Tensor>& parameters, double max_norm) {
  const auto norm = gradient_norm(parameters);
  if (!norm.defined()) return;
  const auto factor = (max_norm / (norm + 1e-6)).clamp_max(1.0);  // 0-dim, on the device
  for (auto& g : gradients_of(parameters)) g.mul_(factor);
}

}  // namespace nmt::optim
