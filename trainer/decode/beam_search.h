#pragma once
// Beam search as the paper decodes (section 6.1): beam size 4, length penalty alpha = 0.6, maximum
// output length = input length + 50, stopping early when possible. Scores are log-probabilities
// normalised by the GNMT length penalty lp(Y) = ((5 + |Y|) / 6)^alpha (Wu et al. 2016), with |Y|
// counting the tokens including EOS. A hypothesis that produces EOS leaves the beam; a sentence
// is finished once it has `beam_size` finished hypotheses or reaches its maximum length.
// Batched over sentences with the decoder's key/value cache; deterministic. Optionally with the
// repetition penalty and n-gram ban of logits_processing.h (off by default), and split into groups
// for diverse beam search (diverse_beam.h).

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "trainer/decode/logits_processing.h"
#include "trainer/model/transformer.h"

namespace nmt::decode {

struct BeamOptions {
  std::int64_t beam_size = 4;           // the paper's beam
  double length_penalty = 0.6;          // alpha
  std::int64_t max_length_offset = 50;  // output tokens <= source tokens + this
  std::int64_t nbest = 1;               // hypotheses returned per sentence (<= beam_size)
  bool use_cache = true;                // false: recompute the whole prefix every step (benchmarks)
  void validate() const;
};

struct Hypothesis {
  std::vector<std::int64_t> tokens;  // without BOS and EOS
  double log_prob = 0.0;             // sum of token log-probabilities (EOS included)
  double score = 0.0;                // log_prob / lp(|tokens| + 1)
};

double length_penalty(std::int64_t length, double alpha);

// Each sentence's longest output in tokens (EOS not counted): its source length (non-padding
// tokens of src [batch, src_len]) plus max_length_offset, within the model's position table.
std::vector<std::int64_t> output_length_limits(model::Transformer& model, const at::Tensor& src,
                                               std::int64_t max_length_offset);

// src [batch, src_len] int64 (tokens + EOS, padded with 0). Per sentence, the best hypotheses
// (nbest), best first. With `repetition` off (the default), the paper's search exactly.
std::vector<std::vector<Hypothesis>> beam_search(model::Transformer& model, const at::Tensor& src,
                                                 const BeamOptions& options,
                                                 const RepetitionOptions& repetition = {});

// The beam of options.beam_size split into `groups` groups (groups divides beam_size) of
// beam_size / groups beams, searched in turn at each step; a candidate token of group g is ranked
// by its score less diversity_penalty times the number of beams of groups 0..g-1 that chose that
// token at this step (Hamming diversity; the hypotheses keep their plain log-probabilities). Each
// group ends like a beam of its own size. Per sentence, per group, the finished hypotheses in the
// order they finished (options.nbest is not read). groups = 1 is beam_search's search exactly.
std::vector<std::vector<std::vector<Hypothesis>>> grouped_beam_search(
    model::Transformer& model, const at::Tensor& src, const BeamOptions& options,
    std::int64_t groups, double diversity_penalty, const RepetitionOptions& repetition);

}  // namespace nmt::decode
