#pragma once
// The position-wise feed-forward network (paper section 3.3): FFN(x) = max(0, x W1 + b1) W2 + b2.

#include <torch/nn/module.h>
#include "trainer/model/dropout.h"
#include "trainer/model/linear.h"

#include <cstdint>

namespace nmt::model {

class FeedForwardImpl : public torch::nn::Module {
 public:
  // `dropout` applies after the ReLU (0 in the paper).
  FeedForwardImpl(std::int64_t d_model, std::int64_t d_ff, double dropout);

  // x [batch, len, d_model] -> [batch, len, d_model]
  torch::Tensor forward(const torch::Tensor& x);

 private:
  Linear linear1_{nullptr}, linear2_{nullptr};
  Dropout dropout_{nullptr};
};
TORCH_MODULE(FeedForward);

}  // namespace nmt::model
