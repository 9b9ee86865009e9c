#pragma once
// Positional encoding (paper section 3.5): fixed sinusoids, or learned positional embeddings
// (Table 3 row E), added to the scaled token embeddings at the bottom of both stacks.

#include <torch/nn/module.h>

#include <cstdint>

#include "trainer/config/model_config.h"

namespace nmt::model {

// PE(pos, 2i) = sin(pos / 10000^(2i / d_model)), PE(pos, 2i + 1) = cos(pos / 10000^(2i / d_model))
// for pos < length. Computed in double, returned as float: [length, d_model].
torch::Tensor sinusoidal_encoding(std::int64_t length, std::int64_t d_model);

// One table of config.max_positions rows, registered as "weight" in both kinds, so the checkpoint
// key reads like a torch::nn::Embedding's: a buffer for sinusoids (not trained, not counted as a
// parameter), a parameter for learned positions.
class PositionalEncodingImpl : public torch::nn::Module {
 public:
  explicit PositionalEncodingImpl(const ModelConfig& config);

  // The encodings of positions start .. start + length - 1: [length, d_model].
  torch::Tensor forward(std::int64_t start, std::int64_t length);

  bool learned() const { return learned_; }
  const torch::Tensor& table() const { return weight_; }  // [max_positions, d_model]

 private:
  bool learned_;
  torch::Tensor weight_;
};
TORCH_MODULE(PositionalEncoding);

}  // namespace nmt::model
