#include "trainer/runtime/precision.h"

#include <ATen/Context.h>
#include <ATen/autocast_mode.h>
#include <ATen/ops/_amp_foreach_non_finite_check_and_unscale.h>
#include <ATen/ops/_foreach_mul.h>
#include <ATen/ops/full.h>
#include <ATen/ops/isfinite.h>
#include <ATen/ops/logical_not.h>
#include <ATen/ops/zeros.h>
#include <fmt/format.h>
#include <torch/version.h>

#include <stdexcept>

#include "trainer/runtime/blas_backend.h"
#include "trainer/runtime/cpu_kernels.h"
#include "trainer/runtime/cuda_info.h"

namespace nmt::runtime {
namespace {

void set_autocast(c10::DeviceType type, bool enabled, at::ScalarType dtype) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  at::autocast::set_autocast_dtype(type, dtype);
  at::autocast::set_autocast_enabled(type, enabled);
#else
  if (type == c10::kCPU) {
    at::autocast::set_autocast_cpu_dtype(dtype);
    at::autocast::set_cpu_enabled(enabled);
  } else {
    at::autocast::set_autocast_gpu_dtype(dtype);
    at::autocast::set_enabled(enabled);
  }
#endif
}

bool autocast_enabled(c10::DeviceType type) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  return at::autocast::is_autocast_enabled(type);
#else
  return type == c10::kCPU ? at::autocast::is_cpu_enabled() : at::autocast::is_enabled();
#endif
}

at::ScalarType autocast_dtype(c10::DeviceType type) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  return at::autocast::get_autocast_dtype(type);
#else
  return type == c10::kCPU ? at::autocast::get_autocast_cpu_dtype()
                           : at::autocast::get_autocast_gpu_dtype();
#endif
}

bool cuda_has_bf16(const c10::Device& device) {
  for (const auto& d : cuda_devices()) {
    if (d.index == (device.has_index() ? device.index() : 0)) return d.capability_major >= 8;
  }
  return false;
}

}  // namespace

CpuBf16 cpu_bf16_instructions() {
  const auto cpu = cpu_instructions();
  if (cpu.amx_bf16) return CpuBf16::kAmx;
  if (cpu.avx512_bf16) return CpuBf16::kAvx512;
  return CpuBf16::kNone;
}

Bf16Probe probe_cpu_bf16(std::int64_t n, int repeats) {
  Bf16Probe probe;
  probe.fp32_gflops = measure_matmul_gflops(static_cast<int>(n), repeats, at::kFloat);
  probe.bf16_gflops = measure_matmul_gflops(static_cast<int>(n), repeats, at::kBFloat16);
  return probe;
}

PrecisionChoice choose_cpu_precision(CpuBf16 instructions, const Bf16Probe& probe) {
  switch (instructions) {
    case CpuBf16::kNone:
      return {Precision::kFp32, "auto: fp32 on this CPU (no AMX-BF16 or AVX512-BF16 instructions)"};
    case CpuBf16::kAmx:
      return {Precision::kBf16, "auto: bf16 on this CPU (AMX-BF16 instructions)"};
    case CpuBf16::kAvx512:
      break;
  }
  const bool bf16 = probe.speedup() >= kAutoBf16MinSpeedup;
  return {bf16 ? Precision::kBf16 : Precision::kFp32,
          fmt::format("auto: {} on this CPU (bf16 matrix products {:.0f} GFLOP/s, fp32 {:.0f}: "
                      "{:.2f}x with AVX512-BF16, {} needed for bf16)",
                      bf16 ? "bf16" : "fp32", probe.bf16_gflops, probe.fp32_gflops, probe.speedup(),
                      kAutoBf16MinSpeedup)};
}

PrecisionChoice resolve_precision(Precision requested, const c10::Device& device) {
  if (device.is_cuda()) {
    const bool bf16 = cuda_has_bf16(device);
    switch (requested) {
      case Precision::kAuto:
        return {bf16 ? Precision::kBf16 : Precision::kFp32,
                fmt::format("auto: {} on {} ({} bf16 tensor cores)", bf16 ? "bf16" : "fp32",
                            device.str(), bf16 ? "has" : "no")};
      case Precision::kBf16:
        if (!bf16) {
          throw std::invalid_argument(
              "precision bf16 needs a GPU of compute capability 8.0 or newer; " + device.str() +
              " is older (use fp16 or fp32)");
        }
        break;
      case Precision::kInt8:
        throw std::invalid_argument("precision int8 is for decoding on a CPU (--device cpu); on " +
                                    device.str() + " use bf16, fp16 or fp32");
      case Precision::kFp32:
      case Precision::kFp16:
        break;
    }
    return {requested, std::string("as configured: ") + precision_name(requested)};
  }
  switch (requested) {
    case Precision::kAuto: {
      const auto instructions = cpu_bf16_instructions();
      return choose_cpu_precision(
          instructions, instructions == CpuBf16::kAvx512 ? probe_cpu_bf16() : Bf16Probe{});
    }
    case Precision::kFp16:
      throw std::invalid_argument(
          "precision fp16 needs a CUDA device (--device cuda); on a CPU use bf16, fp32 or auto");
    case Precision::kFp32:
    case Precision::kBf16:
    case Precision::kInt8:
      break;
  }
  return {requested, std::string("as configured: ") + precision_name(requested)};
}

NativePrecisions native_precisions(const c10::Device& device) {
  if (device.is_cuda()) return {cuda_has_bf16(device), true};
  return {cpu_bf16_instructions() != CpuBf16::kNone, false};
}

PrecisionChoice choose_run_precision(Precision run, const NativePrecisions& native,
                                     const std::function<PrecisionChoice()>& device_auto) {
  const bool runs_natively = run == Precision::kFp32 || (run == Precision::kBf16 && native.bf16) ||
                             (run == Precision::kFp16 && native.fp16);
  if (run != Precision::kAuto && runs_natively) {
    return {run, fmt::format("auto: {}, the precision the run trained in", precision_name(run))};
  }
  auto choice = device_auto();
  choice.reason = run == Precision::kAuto
                      ? "the run's config records no resolved precision; " + choice.reason
                      : fmt::format(
                            "the run trained in {}, which this device does not run "
                            "natively; {}",
                            precision_name(run), choice.reason);
  return choice;
}

PrecisionChoice resolve_run_precision(Precision requested, Precision run,
                                      const c10::Device& device) {
  if (requested != Precision::kAuto) return resolve_precision(requested, device);
  return choose_run_precision(run, native_precisions(device),
                              [&] { return resolve_precision(Precision::kAuto, device); });
}

void configure_cuda_matmuls(Precision precision) {
  if (precision == Precision::kFp32) at::globalContext().setAllowTF32CuBLAS(true);
}

at::ScalarType matmul_type(Precision precision, at::ScalarType fp32_type) {
  if (precision == Precision::kBf16) return at::kBFloat16;
  if (precision == Precision::kFp16) return at::kHalf;
  return fp32_type;
}

AutocastScope::AutocastScope(Precision precision, const c10::Device& device)
    : enabled_(precision == Precision::kBf16 || precision == Precision::kFp16),
      type_(device.type()) {
  if (precision == Precision::kAuto) {
    throw std::logic_error("AutocastScope: resolve precision auto before use");
  }
  if (!enabled_) return;
  was_enabled_ = autocast_enabled(type_);
  was_type_ = autocast_dtype(type_);
  set_autocast(type_, true, matmul_type(precision));
}

// Restores what was set before (a scope may nest inside another, e.g. decoding in validation).
AutocastScope::~AutocastScope() {
  if (!enabled_) return;
  set_autocast(type_, was_enabled_, was_type_);
  if (!was_enabled_) at::autocast::clear_cache();
}

LossScaler::LossScaler(bool enabled, double initial_scale, std::int64_t growth_interval)
    : enabled_(enabled), scale_(initial_scale), growth_interval_(growth_interval) {}

bool LossScaler::unscale(const std::vector<at::Tensor>& parameters, double divide_by) {
  std::vector<at::Tensor> grads;
  for (const auto& p : parameters) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  if (grads.empty()) return true;
  if (!enabled_) {
    if (divide_by != 1.0) at::_foreach_mul_(grads, 1.0 / divide_by);  // multi-tensor, no read
    return true;
  }
  // Everything stays on the device until the one read below: the gradients are divided by the
  // scale (and divide_by) and a flag counts those holding an inf or NaN.
  const auto options = grads.front().options().dtype(at::kFloat);
  auto found_inf = at::zeros({1}, options);
  const auto inv_scale = at::full({1}, 1.0 / (scale_ * divide_by), options);
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
