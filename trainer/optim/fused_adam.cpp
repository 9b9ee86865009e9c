#include "trainer/optim/fused_adam.h"

#include <ATen/ops/_fused_adam.h>
#include <ATen/ops/full.h>
#include <ATen/ops/zeros_like.h>
#include <torch/version.h>

#include <map>
#include <memory>
#include <utility>

#include "trainer/optim/adam_state.h"

namespace nmt::optim {

bool fused_adam_available(c10::DeviceType device_type) {
  if (device_type == c10::kCUDA) return true;
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  return device_type == c10::kCPU;
#else
  return false;
#endif
}

FusedAdam::FusedAdam(std::vector<at::Tensor> parameters, const AdamSettings& settings)
    : parameters_(std::move(parameters)),
      settings_(settings),
      adam_(parameters_, torch::optim::AdamOptions(0.0)
                             .betas({settings.beta1, settings.beta2})
                             .eps(settings.eps)) {
  fused_ = settings.allow_fused && !parameters_.empty() &&
           fused_adam_available(parameters_.front().device().type());
  for (const auto& p : parameters_) {
    fused_ = fused_ && p.device() == parameters_.front().device() && p.scalar_type() == at::kFloat;
  }
}

void FusedAdam::zero_grad() {
  adam_.zero_grad();
}

void FusedAdam::step(double lr) {
  if (fused_) {
    step_fused(lr);
    return;
  }
  for (auto& group : adam_.param_groups())
    static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
  adam_.step();
}

void FusedAdam::step_fused(double lr) {
  std::vector<at::Tensor> params, grads, exp_avgs, exp_avg_sqs, steps;
  std::map<std::int64_t, at::Tensor> step_tensors;  // one per distinct count (all share one)
  auto& states = adam_.state();
  for (const auto& p : parameters_) {
    if (!p.grad().defined()) continue;
    auto& slot = states[adam_state_key(states, p)];
    if (!slot) {  // first update of this parameter: zero moments, as Adam::step creates them
      auto fresh = std::make_unique<torch::optim::AdamParamState>();
      fresh->step(0);
      fresh->exp_avg(at::zeros_like(p, at::MemoryFormat::Preserve));
      fresh->exp_avg_sq(at::zeros_like(p, at::MemoryFormat::Preserve));
      slot = std::move(fresh);
    }
    auto& s = static_cast<torch::optim::AdamParamState&>(*slot);
    s.step(s.step() + 1);
    params.push_back(p);
    grads.push_back(p.grad());
    exp_avgs.push_back(s.exp_avg());
    exp_avg_sqs.push_back(s.exp_avg_sq());
    // The kernel reads each parameter's step count from a device tensor (read only, so parameters
    // with the same count share one); the host count above is the one checkpoints store.
    auto& count = step_tensors[s.step()];
    if (!count.defined()) count = at::full({}, static_cast<double>(s.step()), p.options());
    steps.push_back(count);
  }
  if (params.empty()) return;
  at::_fused_adam_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps, lr,
                   settings_.beta1, settings_.beta2, /*weight_decay=*/0.0, settings_.eps,
                   /*amsgrad=*/false, /*maximize=*/false);
}

}  // namespace nmt::optim
