#pragma once
// Mixed precision on CUDA, chosen at run time: bf16 autocast, or fp16 autocast with dynamic loss
// scaling. On CPU only fp32 is offered (the paper trained in fp32; CPU autocast gains nothing on
// this project's machines). The LibTorch autocast API changed names in 2.4; the version check
// below is about that API, not about whether CUDA is compiled in.

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <string>
#include <vector>

namespace nmt::runtime {

// Throws std::invalid_argument for a precision the device cannot run.
void check_precision(const std::string& precision, const c10::Device& device);

// fp32 on CUDA runs its matrix products on the tensor cores in TF32 (10-bit mantissa products,
// fp32 accumulation), as PyTorch's own training recipes do; bf16 and fp16 leave the setting alone.
// Affects cuBLAS only, never CPU kernels.
void configure_cuda_matmuls(const std::string& precision);

// Enables CUDA autocast for its lifetime when precision is bf16 or fp16 (no-op for fp32).
class AutocastScope {
 public:
  explicit AutocastScope(const std::string& precision);
  ~AutocastScope();
  AutocastScope(const AutocastScope&) = delete;
  AutocastScope& operator=(const AutocastScope&) = delete;

 private:
  bool enabled_ = false;
};

// Dynamic loss scaling for fp16: multiply the loss by scale(); after backward, unscale() divides
// the gradients and reports whether they are finite; update() halves the scale after an overflow
// (the step is then skipped) and doubles it after `growth_interval` clean steps. unscale() reads
// one value back from the device per call, whatever the number of parameters (on CUDA the check
// is one fused pass over all gradients); host_reads() counts those reads.
class LossScaler {
 public:
  explicit LossScaler(bool enabled, double initial_scale = 65536.0,
                      std::int64_t growth_interval = 2000);
  double scale() const { return enabled_ ? scale_ : 1.0; }
  bool unscale(const std::vector<at::Tensor>& parameters);  // true when all gradients are finite
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
