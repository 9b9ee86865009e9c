#pragma once
// Greedy decoding: at each step the most probable next token, with the decoder's key/value cache,
// until every sentence has produced EOS or max_length tokens.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "trainer/model/transformer.h"

namespace nmt::decode {

// src [batch, src_len] int64 (tokens + EOS, padded with 0). Returns per sentence the output
// tokens without BOS and EOS. max_length < 0 means src_len + 50 (the paper's limit).
std::vector<std::vector<std::int64_t>> greedy_decode(model::Transformer& model,
                                                     const at::Tensor& src,
                                                     std::int64_t max_length = -1);

}  // namespace nmt::decode
