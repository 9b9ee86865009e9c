#pragma once
// Mixed precision, chosen at run time for the device: bf16 autocast (CUDA with bf16 tensor cores,
// and CPUs with native bf16 matrix instructions: AMX or AVX512-BF16 through oneDNN), fp16 autocast
// with dynamic loss scaling (CUDA), or fp32 (TF32 matrix products on CUDA). Parameters, optimizer
// state and the loss stay fp32 in every mode. The LibTorch autocast API changed names in 2.4; the
// version check in precision.cpp is about that API, not about whether CUDA is compiled in.

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "trainer/config/precision_mode.h"

namespace nmt::runtime {

// The CPU's native bf16 matrix instructions, from CPUID: AMX-BF16 (tile products; Intel Xeon
// since Sapphire Rapids), else AVX512-BF16 (dot products in vector registers), else none.
enum class CpuBf16 { kNone, kAvx512, kAmx };
CpuBf16 cpu_bf16_instructions();

// One fp32 and one bf16 square matrix product timed on the CPU with the current threads.
struct Bf16Probe {
  double fp32_gflops = 0.0;
  double bf16_gflops = 0.0;
  double speedup() const { return fp32_gflops > 0 ? bf16_gflops / fp32_gflops : 0.0; }
};
// Best of `repeats` products of n x n matrices in each type (measure_matmul_gflops), after one
// untimed warm-up each (about 20 ms at n = 512 on a CPU with bf16 instructions).
Bf16Probe probe_cpu_bf16(std::int64_t n = 512, int repeats = 4);

// auto picks bf16 on a CPU with AMX-BF16 without timing anything (its bf16 products run several
// times fp32's on every such CPU, and a timing taken while other processes share the cores once
// chose fp32 there), fp32 on a CPU without native bf16, also without timing: the choice is then
// the same in every process of a job and every run of a config. Only a CPU with AVX512-BF16 and
// no AMX is probed, and gets bf16 where its bf16 products measure at least this much faster.
inline constexpr double kAutoBf16MinSpeedup = 1.5;

struct PrecisionChoice {
  Precision precision = Precision::kFp32;  // never kAuto
  std::string reason;                      // one line for the log
};

// The decision for a CPU (kept apart from CPUID and the timing so it can be tested); `probe` is
// only looked at for CpuBf16::kAvx512.
PrecisionChoice choose_cpu_precision(CpuBf16 instructions, const Bf16Probe& probe);

// Resolves `requested` for `device`. auto: on CUDA bf16 when the GPU has bf16 tensor cores
// (compute capability 8.0 or newer), else fp32; on a CPU, choose_cpu_precision with CPUID's
// answer and, for AVX512-BF16 without AMX, probe_cpu_bf16().
// Explicit choices are checked: fp16 needs CUDA (CPU autocast has no fp16), bf16 on CUDA needs
// 8.0 or newer, int8 (decoding only) needs the CPU. Errors are std::invalid_argument saying what
// to use instead.
PrecisionChoice resolve_precision(Precision requested, const c10::Device& device);

// The reduced precisions a device runs natively: bf16 on GPUs of compute capability 8.0 or newer
// and on CPUs with AMX-BF16 or AVX512-BF16; fp16 on CUDA (CPU autocast has none). fp32 runs
// everywhere.
struct NativePrecisions {
  bool bf16 = false;
  bool fp16 = false;
};
NativePrecisions native_precisions(const c10::Device& device);

// Precision auto for work on a trained run's checkpoint (translating, scoring): `run`, the
// precision the run trained in (its config's train.precision, resolved when it started), where
// the device runs it natively, so that the model is used as it was trained; else (the run's is
// not native here, or its config still says auto) the device's own auto choice, `device_auto`,
// called only then (on some CPUs it times matrix products). The reason says which and why.
PrecisionChoice choose_run_precision(Precision run, const NativePrecisions& native,
                                     const std::function<PrecisionChoice()>& device_auto);
// `requested` for a trained run's checkpoint on `device`: auto as choose_run_precision with this
// device's answers; an explicit choice as resolve_precision.
PrecisionChoice resolve_run_precision(Precision requested, Precision run,
                                      const c10::Device& device);

// fp32 on CUDA runs its matrix products on the tensor cores in TF32 (10-bit mantissa products,
// fp32 accumulation), as PyTorch's own training recipes do; bf16 and fp16 leave the setting alone.
// Affects cuBLAS only, never CPU kernels.
void configure_cuda_matmuls(Precision precision);

// The type autocast runs matrix products in under `precision` (bf16 or fp16); under fp32, the
// inputs' own type `fp32_type` (fp64 in tests).
at::ScalarType matmul_type(Precision precision, at::ScalarType fp32_type = at::kFloat);

// Enables autocast on `device`'s type for its lifetime when precision is bf16 or fp16 (no-op for
// fp32), and restores the previous setting after. Not for kAuto: resolve first.
class AutocastScope {
 public:
  AutocastScope(Precision precision, const c10::Device& device);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool enabled_ = false;
  c10::DeviceType type_ = c10::kCPU;
  bool was_enabled_ = false;
  c10::ScalarType was_type_ = c10::kBFloat16;
};

// Dynamic loss scaling for fp16: multiply the loss by scale(); after backward, unscale() divides
// the gradients by the scale (and by `divide_by`, the update's target tokens, in the same pass)
// and reports whether they are finite; update() halves the scale after an overflow (the step is
// then skipped) and doubles it after `growth_interval` clean steps. unscale() reads one value back
// from the device per call, whatever the number of parameters (on CUDA the check is one fused
// pass over all gradients); host_reads() counts those reads. Disabled (bf16, fp32), unscale() only
// divides, with one multi-tensor kernel, reads nothing and returns true.
class LossScaler {
 public:
  explicit LossScaler(bool enabled, double initial_scale = 65536.0,
                      std::int64_t growth_interval = 2000);
  bool enabled() const { return enabled_; }
  double scale() const { return enabled_ ? scale_ : 1.0; }
  // true when all gradients are finite
  bool unscale(const std::vector<at::Tensor>& parameters, double divide_by = 1.0);
  void update(bool finite);
  std::int64_t host_reads() const { return host_reads_; }

 private:
  bool enabled_;
  double scale_;
  std::int64_t growth_interval_;
  std::int64_t clean_steps_ = 0;
  std::int64_t host_reads_ = 0;
};

}  // namespace nmt::runtime
