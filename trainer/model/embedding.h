#pragma once
// Embeddings and softmax (paper section 3.4): learned token embeddings multiplied by
// sqrt(d_model); the same matrix can serve as the pre-softmax linear transformation.

#include <torch/nn/module.h>

#include <cstdint>

namespace nmt::model {

class ScaledEmbeddingImpl : public torch::nn::Module {
 public:
  // weight [vocab_size, d_model], initialized N(0, d_model^-0.5) so that weight * sqrt(d_model)
  // has unit variance.
  ScaledEmbeddingImpl(std::int64_t vocab_size, std::int64_t d_model);

  // tokens [batch, len] int64 -> [batch, len, d_model], scaled by sqrt(d_model)
  torch::Tensor forward(const torch::Tensor& tokens);
  // The shared pre-softmax projection, without bias: hidden [..., d_model] -> [..., vocab_size]
  torch::Tensor project(const torch::Tensor& hidden);

  const torch::Tensor& weight() const { return weight_; }

 private:
  double scale_;
  torch::Tensor weight_;
};
TORCH_MODULE(ScaledEmbedding);

}  // namespace nmt::model
