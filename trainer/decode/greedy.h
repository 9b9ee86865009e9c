#pragma once
// Greedy decoding: at each step the most probable next token, with the decoder's key/value cache,
// until every sentence has produced EOS or reached its length cap. Also the row-by-row decoding
// loop that greedy decoding and sampling (sampling.h) share: rows that decode independently of
// one another, each step choosing one token per row, finished rows leaving the cache.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <vector>

#include "trainer/decode/beam_search.h"
#include "trainer/decode/decode_options.h"
#include "trainer/decode/logits_processing.h"
#include "trainer/model/transformer.h"

namespace nmt::decode {

// src [batch, src_len] int64 (tokens + EOS, padded with 0). Returns per sentence the output
// tokens without BOS and EOS. max_length < 0 means src_len + 50 (the paper's limit).
std::vector<std::vector<std::int64_t>> greedy_decode(model::Transformer& model,
                                                     const at::Tensor& src,
                                                     std::int64_t max_length = -1);

// Greedy decoding as DecodeOptions says (strategy kGreedy: the length cap, alpha for the score,
// the repetition options): per sentence one hypothesis, its log_prob the sum of the chosen
// tokens' log-probabilities after the repetition options.
std::vector<std::vector<Hypothesis>> greedy_search(model::Transformer& model, const at::Tensor& src,
                                                   const DecodeOptions& options);

// Chooses each row's next token: log_probs [rows, V] float (the model's, after the repetition
// options) -> [rows] int64 on the same device.
using ChooseTokens = std::function<at::Tensor(const at::Tensor& log_probs)>;

// What decode_rows decodes: `copies` rows per sentence (row b * copies + c), sentence b's rows
// up to max_lengths[b] tokens.
struct RowDecoding {
  std::int64_t copies = 1;
  std::vector<std::int64_t> max_lengths;  // one per sentence
  double alpha = 0.6;                     // Hypothesis::score's length penalty
  RepetitionOptions repetition;
};

// src [batch, src_len] -> one hypothesis per row, in row order; a row ends at EOS (whose
// log-probability its log_prob includes) or at its sentence's length cap.
std::vector<Hypothesis> decode_rows(model::Transformer& model, const at::Tensor& src,
                                    const RowDecoding& rows, const ChooseTokens& choose);

}  // namespace nmt::decode
