#pragma once
// The reference for a search's steps: every step decodes each beam's whole prefix again, without
// the decoder's key/value cache. The cache is tested against it (its logits are the same to
// rounding), and bench/beam_cache_bench measures what the cache saves. Slower by a factor that
// grows with the output's length; no tool decodes with it.

#include "trainer/decode/beam_search.h"

namespace nmt::decode {

// A DecoderStepsFactory: beam_search(model, src, options, {}, recomputed_steps).
std::unique_ptr<DecoderSteps> recomputed_steps(model::Transformer& model, const at::Tensor& memory,
                                               const at::Tensor& src, std::int64_t K);

}  // namespace nmt::decode
