#pragma once
// Ancestral sampling: each step draws the next token from the model's distribution, optionally
// sharpened or flattened by a temperature and truncated to the top k tokens (Fan et al. 2018)
// and/or to the nucleus of mass p (Holtzman et al. 2020), after the repetition options. N
// independent samples per sentence, decoded together on the key/value cache (one cache row per
// sample; finished samples leave it), ranked by Hypothesis::score. Deterministic for a seed: one
// generator, seeded explicitly, draws every token of the call, so the same model, sources (in the
// same batches), options and seed give the same samples on the same machine.

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "trainer/decode/beam_search.h"
#include "trainer/decode/decode_options.h"
#include "trainer/model/transformer.h"

namespace nmt::decode {

// A generator for `device` seeded with `seed`, independent of the global one.
at::Generator seeded_generator(const at::Device& device, std::uint64_t seed);

// One token per row drawn from log_probs [rows, V] (the model's) shaped by the temperature, top_k
// and top_p of `options`: [rows] int64.
at::Tensor draw_tokens(const at::Tensor& log_probs, const SamplingOptions& options,
                       at::Generator& generator);

// src [batch, src_len] int64 (tokens + EOS, padded with 0). Per sentence, the best nbest of its
// sampling.num_samples samples, best score first. A hypothesis's log_prob sums the log-
// probabilities of the model's distribution after the repetition options, before temperature and
// truncation (which decide what is drawn, not how it scores), so scores compare across settings.
// Samples that come out the same are kept, each counted. Draws from `generator` when given (on
// src's device; successive calls then continue one random stream), else from a generator seeded
// with sampling.seed for this call alone.
std::vector<std::vector<Hypothesis>> sample(model::Transformer& model, const at::Tensor& src,
                                            const DecodeOptions& options,
                                            at::Generator* generator = nullptr);

}  // namespace nmt::decode
