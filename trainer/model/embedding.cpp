// Embeddings and softmax (paper section 3.4). No padding_idx: padding positions are never
// attended to, so their embedding does not matter and needs no special case.

#include "trainer/model/embedding.h"

#include <ATen/ops/embedding.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/linear.h>
#include <torch/nn/init.h>

#include <cmath>

namespace nmt::model {

ScaledEmbeddingImpl::ScaledEmbeddingImpl(std::int64_t vocab_size, std::int64_t d_model)
    : scale_(std::sqrt(static_cast<double>(d_model))) {
  weight_ = register_parameter("weight", at::empty({vocab_size, d_model}));
  torch::nn::init::normal_(weight_, 0.0, 1.0 / scale_);
}

torch::Tensor ScaledEmbeddingImpl::forward(const torch::Tensor& tokens) {
  TORCH_CHECK(tokens.scalar_type() == at::kLong, "token ids must be int64, got ",
              tokens.scalar_type());
  return at::embedding(weight_, tokens) * scale_;  // [batch, len, d_model]
}

torch::Tensor ScaledEmbeddingImpl::project(const torch::Tensor& hidden) {
  return at::linear(hidden, weight_);  // [..., vocab_size]
}

}  // namespace nmt::model
