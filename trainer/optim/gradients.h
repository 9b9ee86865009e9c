#pragma once
// Whole-model gradient operations that stay on the device: each is a few multi-tensor kernels over
// every gradient, and none reads a value back to the host (the caller decides when to).

#include <ATen/core/Tensor.h>

#include <vector>

namespace nmt::optim {

// The gradients that exist (parameters without one are skipped).
std::vector<at::Tensor> gradients_of(const std::vector<at::Tensor>& parameters);

// L2 norm of all gradients together, as a 0-dim fp32 tensor on their device (undefined if none).
at::Tensor gradient_norm(const std::vector<at::Tensor>& parameters);

// Scales the gradients down so that their joint L2 norm is at most `max_norm` (no-op when it
// already is), without reading the norm back to the host.
void clip_gradient_norm(const std::vector<at::Tensor>& parameters, double max_norm);

}  // namespace nmt::optim
