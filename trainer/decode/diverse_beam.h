#pragma once
// Diverse beam search (Vijayakumar et al. 2018, "Diverse Beam Search: Decoding Diverse Solutions
// from Neural Sequence Models", Algorithm 1 with Hamming diversity): the beam of B splits into G
// groups of B / G beams; at each step the groups are extended in turn, group g ranking its
// candidates by their log-probability less lambda times the number of beams of groups 0..g-1
// that chose the same token at this step. The search is beam_search.h's (length penalty, EOS,
// length cap, key/value cache, batched over sentences), run by grouped_beam_search; hypotheses
// keep their plain log-probabilities and GNMT scores. Deterministic.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "trainer/decode/beam_search.h"
#include "trainer/decode/decode_options.h"
#include "trainer/model/transformer.h"

namespace nmt::decode {

// Orders one sentence's finished hypotheses, one list per group: each group's best first, by
// score, then all the others by score; at most nbest. With one group: by score (a stable sort).
std::vector<Hypothesis> diverse_nbest(std::vector<std::vector<Hypothesis>> groups,
                                      std::int64_t nbest);

// src [batch, src_len] int64 (tokens + EOS, padded with 0). Per sentence, diverse_nbest of the
// groups' hypotheses (options.nbest of them, at most beam_size). groups = 1 is beam search.
std::vector<std::vector<Hypothesis>> diverse_beam_search(model::Transformer& model,
                                                         const at::Tensor& src,
                                                         const DecodeOptions& options);

}  // namespace nmt::decode
