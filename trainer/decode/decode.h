#pragma once
// The single entry point of decoding: beam search (the paper's, section 6.1), greedy decoding,
// sampling or diverse beam search as DecodeOptions::strategy says, each batched over sentences on
// the decoder's key/value cache, with the repetition options applied at every step.

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <vector>

#include "trainer/decode/beam_search.h"
#include "trainer/decode/decode_options.h"
#include "trainer/model/transformer.h"

namespace nmt::decode {

// src [batch, src_len] int64 (tokens + EOS, padded with 0), on the model's device. Validates
// `options` (std::invalid_argument naming the field), then returns per sentence its n-best list,
// best first (options.nbest hypotheses, fewer only where beam search finished fewer).
// Sampling draws from `generator` when given (seeded_generator(device, seed) in sampling.h: one
// per run, so that successive batches continue one random stream instead of each restarting
// sampling.seed's), else from a generator seeded with sampling.seed for this call alone.
std::vector<std::vector<Hypothesis>> decode(model::Transformer& model, const at::Tensor& src,
                                            const DecodeOptions& options,
                                            at::Generator* generator = nullptr);

}  // namespace nmt::decode
