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
#include <functional>
#include <memory>
#include <vector>

#include "trainer/decode/logits_processing.h"
#include "trainer/model/transformer.h"

namespace nmt::decode {

struct BeamOptions {
  std::int64_t beam_size = 4;           // the paper's beam
  double length_penalty = 0.6;          // alpha
  std::int64_t max_length_offset = 50;  // output tokens <= source tokens + this
  std::int64_t nbest = 1;               // hypotheses returned per sentence (<= beam_size)
  void validate() const;
};

struct Hypothesis {
  std::vector<std::int64_t> tokens;  // without BOS and EOS
  double log_prob = 0.0;             // sum of token log-probabilities (EOS included)
  double score = 0.0;                // log_prob / lp(|tokens| + 1)
};

double length_penalty(std::int64_t length, double alpha);

// What a search asks of the model at each step. Its slots are the K beams of each sentence still
// searched: sentence b's at b * K .. b * K + K - 1, the sentences in batch order.
class DecoderSteps {
 public:
  virtual ~DecoderSteps() = default;
  // The next token's logits [slots, V]. last [slots] int64: each slot's last token (BOS at the
  // first step); prefixes: each slot's tokens so far (without BOS), all of one length.
  virtual at::Tensor logits(const at::Tensor& last,
                            const std::vector<std::vector<std::int64_t>>& prefixes) = 0;
  // The new slots continue the old slots `order` [new slots] int64. `kept` [sentences] int64,
  // when not null: the sentences still searched, as positions among those searched before.
  virtual void reorder(const at::Tensor& order, const at::Tensor* kept) = 0;
};

// Makes one search's steps: the encoder's output memory [B, src_len, d_model] of src
// [B, src_len], K slots a sentence.
using DecoderStepsFactory = std::function<std::unique_ptr<DecoderSteps>(
    model::Transformer& model, const at::Tensor& memory, const at::Tensor& src, std::int64_t K)>;

// The decoder's key/value cache: each step decodes the last token only. What every search uses
// unless told otherwise.
std::unique_ptr<DecoderSteps> cached_steps(model::Transformer& model, const at::Tensor& memory,
                                           const at::Tensor& src, std::int64_t K);

// Each sentence's longest output in tokens (EOS not counted): its source length (non-padding
// tokens of src [batch, src_len]) plus max_length_offset, within the model's position table.
std::vector<std::int64_t> output_length_limits(model::Transformer& model, const at::Tensor& src,
                                               std::int64_t max_length_offset);

// src [batch, src_len] int64 (tokens + EOS, padded with 0). Per sentence, the best hypotheses
// (nbest), best first. With `repetition` off (the default), the paper's search exactly.
std::vector<std::vector<Hypothesis>> beam_search(model::Transformer& model, const at::Tensor& src,
                                                 const BeamOptions& options,
                                                 const RepetitionOptions& repetition = {},
                                                 const DecoderStepsFactory& steps = cached_steps);

// The beam of options.beam_size split into `groups` groups (groups divides beam_size) of
// beam_size / groups beams, searched in turn at each step; a candidate token of group g is ranked
// by its score less diversity_penalty times the number of beams of groups 0..g-1 that chose that
// token at this step (Hamming diversity; the hypotheses keep their plain log-probabilities). Each
// group ends like a beam of its own size. Per sentence, per group, the finished hypotheses in the
// order they finished (options.nbest is not read). groups = 1 is beam_search's search exactly.
std::vector<std::vector<std::vector<Hypothesis>>> grouped_beam_search(
    model::Transformer& model, const at::Tensor& src, const BeamOptions& options,
    std::int64_t groups, double diversity_penalty, const RepetitionOptions& repetition,
    const DecoderStepsFactory& steps = cached_steps);

}  // namespace nmt::decode
