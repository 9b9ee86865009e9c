// The position-wise feed-forward network (paper section 3.3): FFN(x) = max(0, x W1 + b1) W2 + b2,
// with an optional dropout after the ReLU (ModelConfig::ffn_dropout; not in the paper).

#include "trainer/model/feed_forward.h"

#include <torch/nn/init.h>

namespace nmt::model {

FeedForwardImpl::FeedForwardImpl(std::int64_t d_model, std::int64_t d_ff, double dropout) {
  linear1_ = register_module("linear1", Linear(d_model, d_ff));
  linear2_ = register_module("linear2", Linear(d_ff, d_model));
  dropout_ = register_module("dropout", Dropout(dropout));
  // Glorot/Xavier uniform weights, zero biases (LibTorch's default is Kaiming uniform).
  for (auto* linear : {&linear1_, &linear2_}) {
    torch::nn::init::xavier_uniform_((*linear)->weight);
    torch::nn::init::zeros_((*linear)->bias);
  }
}

torch::Tensor FeedForwardImpl::forward(const torch::Tensor& x) {
  return linear2_(dropout_(linear1_(x).relu()));  // [batch, len, d_ff] inside
}

}  // namespace nmt::model
