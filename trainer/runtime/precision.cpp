#include "trainer/runtime/precision.h"

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <ATen/ops/_amp_foreach_non_finite_check_and_unscale.h>
#include <ATen/ops/full.h>
#include <ATen/ops/isfinite.h>
#include <ATen/ops/logical_not.h>
#include <ATen/ops/zeros.h>
#include <torch/version.h>

#include <stdexcept>

namespace nmt::runtime {
namespace {

at::ScalarType autocast_type(const std::string& precision) {
  return precision == "bf16" ? at::kBFloat16 : at::kHalf;
}

void set_cuda_autocast(bool enabled, at::ScalarType dtype) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  at::autocast::set_autocast_dtype(at::kCUDA, dtype);
  at::autocast::set_autocast_enabled(at::kCUDA, enabled);
#else
  at::autocast::set_autocast_gpu_dtype(dtype);
  at::autocast::set_enabled(enabled);
#endif
}

}  // namespace

void check_precision(const std::string& precision, const c10::Device& device) {
  if (precision == "fp32") return;
  if (precision != "bf16" && precision != "fp16") {
    throw std::invalid_argument("unknown precision '" + precision +
                                "' (expected fp32, bf16, fp16)");
  }
  if (!device.is_cuda()) {
    throw std::invalid_argument("precision " + precision +
                                " needs a CUDA device (--device cuda); use fp32 on CPU");
  }
}

void configure_cuda_matmuls(const std::string& precision) {
  if (precision == "fp32") at::globalContext().setAllowTF32CuBLAS(true);
}

AutocastScope::AutocastScope(const std::string& precision) : enabled_(precision != "fp32") {
  if (enabled_) set_cuda_autocast(true, autocast_type(precision));
}

AutocastScope::~AutocastScope() {
  if (!enabled_) return;
  set_cuda_autocast(false, at::kHalf);
  at::autocast::clear_cache();
}

LossScaler::LossScaler(bool enabled, double initial_scale, std::int64_t growth_interval)
    : enabled_(enabled), scale_(initial_scale), growth_interval_(growth_interval) {}

bool LossScaler::unscale(const std::vector<at::Tensor>& parameters) {
  if (!enabled_) return true;
  std::vector<at::Tensor> grads;
  for (const auto& p : parameters) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  if (grads.empty()) return true;
  // Everything stays on the device until the one read below: the gradients are divided by the
  // scale and a flag counts those holding an inf or NaN.
  const auto options = grads.front().options().dtype(at::kFloat);
  auto found_inf = at::zeros({1}, options);
  const auto inv_scale = at::full({1}, 1.0 / scale_, options);
  if (grads.front().is_cuda()) {
    at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf, inv_scale);  // one fused pass
  } else {
    for (auto& g : grads) {
      g.mul_(inv_scale);
      found_inf.add_(at::logical_not(at::isfinite(g)).any());
    }
  }
  ++host_reads_;
  return found_inf.item<float>() == 0.0f;
}

void LossScaler::update(bool finite) {
  if (!enabled_) return;
  if (!finite) {
    scale_ /= 2.0;
    clean_steps_ = 0;
  } else if (++clean_steps_ >= growth_interval_) {
    scale_ *= 2.0;
    clean_steps_ = 0;
  }
}

}  // namespace nmt::runtime
