#pragma once
// Dropout (paper section 5.4, "Residual Dropout"), with a CPU mask that is drawn in parallel.
// LibTorch's CPU dropout draws its mask from the global generator one element at a time, in one
// thread: on a small model that serial draw was a tenth of every training step on 2 cores
// (perf, configs/multi30k.yaml). Here every element's keep/drop comes from a counter-based hash
// of (a seed drawn once per call from LibTorch's default CPU generator, the element's index), so
// the mask is computed by all threads and is the same for any number of them; torch::manual_seed
// still makes training repeatable. Other devices use LibTorch's (fused) dropout.

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <cstdint>

namespace nmt::model {

class DropoutImpl : public torch::nn::Module {
 public:
  explicit DropoutImpl(double p);

  // x [any shape] -> the same shape: x itself in eval mode or with p = 0, else x * mask
  torch::Tensor forward(const torch::Tensor& x);

  double p() const { return p_; }

 private:
  double p_;
};
TORCH_MODULE(Dropout);

// The multiplier dropout applies, shaped and typed like `like` (a contiguous CPU tensor of a
// floating type): 0 with probability p, else 1/(1-p). p is resolved to 1/65536 (the mask draws
// 16-bit uniforms, four per 64-bit hash) and the scale uses the resolved p, so E[mask] = 1 up to
// the rounding of the scale to the mask's type.
torch::Tensor dropout_mask(const torch::Tensor& like, double p, std::uint64_t seed);

}  // namespace nmt::model
