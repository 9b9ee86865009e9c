#pragma once
// Embeddings and softmax (paper section 3.4): learned token embeddings multiplied by
// sqrt(d_model); the same matrix can serve as the pre-softmax linear transformation.

#include <torch/nn/module.h>

#include <cstdint>
#include <optional>

#include "trainer/model/linear.h"

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

  // For CPU decoding: the lookup reads int8 rows (one scale per row) and, when `projection`, the
  // pre-softmax projection runs on int8 weights (Int8Matrix); the fp32 weight is released (it
  // becomes an empty tensor). Without `projection`, project() is then an error.
  void quantize_int8(bool projection);
  bool quantized() const { return int8_rows_.values.defined(); }
  // For fp32 decoding on a CPU: the projection runs on a packed copy of the weight
  // (runtime::PackedWeight; the lookup keeps the fp32 weight). Nothing happens where the BLAS has
  // no packed products or when quantized.
  void pack_projection();
  // Bytes of the int8 rows and projection or the packed projection, which no registered tensor
  // holds (0 before either).
  std::int64_t extra_bytes() const;

  const torch::Tensor& weight() const { return weight_; }

 private:
  double scale_;
  torch::Tensor weight_;
  Int8Rows int8_rows_;                                      // quantized lookup table, or undefined
  std::optional<Int8Matrix> int8_projection_;               // quantized projection, or none
  std::optional<runtime::PackedWeight> packed_projection_;  // packed fp32 projection, or none
};
TORCH_MODULE(ScaledEmbedding);

}  // namespace nmt::model
