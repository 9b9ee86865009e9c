#pragma once
// What the decoding tests share: a tiny random Transformer (2 layers, d_model 32, 40 pieces, no
// dropout) and a padded batch of three sources of lengths 5, 2 and 7 (EOS is 3, padding 0).

#include <ATen/ops/tensor.h>
#include <torch/utils.h>

#include <cstdint>
#include <vector>

#include "trainer/model/transformer.h"

namespace nmt::decode {

inline model::ModelConfig tiny() {
  model::ModelConfig c;
  c.vocab_size = 40;
  c.layers = 2;
  c.d_model = 32;
  c.d_ff = 64;
  c.heads = 4;
  c.d_k = c.d_v = 8;
  c.dropout = 0.0;
  c.max_positions = 64;
  return c;
}

inline model::Transformer random_model(std::uint64_t seed) {
  torch::manual_seed(seed);
  model::Transformer m(tiny());
  m->eval();
  return m;
}

// Sources with EOS, padded: lengths 5, 2 and 7.  [3, 8]
inline at::Tensor sources() {
  return at::tensor(std::vector<std::int64_t>{5,  6,  7,  8,  9,  3,  0,  0,  //
                                              10, 11, 3,  0,  0,  0,  0,  0,  //
                                              12, 13, 14, 15, 16, 17, 18, 3})
      .reshape({3, 8});
}

}  // namespace nmt::decode
