#pragma once
// Adam (paper section 5.3: beta1 0.9, beta2 0.98, eps 1e-9) applied to all parameters by one fused
// kernel where the LibTorch line has one (at::_fused_adam_: CUDA on every supported line, CPU from
// LibTorch 2.4), else by LibTorch's per-parameter Adam::step. Same update either way:
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//   p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps)
// The state lives in a torch::optim::Adam in both cases, so checkpoints read and write one format.
// A step reads nothing back from the device.

#include <torch/optim/adam.h>

#include <cstdint>
#include <vector>

namespace nmt::optim {

struct AdamSettings {
  double beta1 = 0.9, beta2 = 0.98, eps = 1e-9;
  bool allow_fused = true;  // false: always LibTorch's Adam::step (for comparisons)
};

class FusedAdam {
 public:
  FusedAdam(std::vector<at::Tensor> parameters, const AdamSettings& settings);

  void zero_grad();
  // One update with learning rate `lr` of every parameter that has a gradient.
  void step(double lr);
  // Whether step() runs the fused kernel on these parameters' device.
  bool fused() const { return fused_; }

  // The state (moments and step counts): what checkpoints save and load.
  torch::optim::Adam& state() { return adam_; }
  const torch::optim::Adam& state() const { return adam_; }

 private:
  void step_fused(double lr);

  std::vector<at::Tensor> parameters_;
  AdamSettings settings_;
  torch::optim::Adam adam_;
  bool fused_ = false;
};

// Whether this LibTorch line has a fused Adam kernel for `device_type`.
bool fused_adam_available(c10::DeviceType device_type);

}  // namespace nmt::optim
