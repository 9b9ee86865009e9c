#pragma once
// The options of every decoding strategy in one struct, validated in one place (decode.cpp).
// The defaults are the paper's decoding (section 6.1): beam search, beam 4, alpha 0.6, output
// length up to the source's plus 50, one hypothesis, no repetition constraints. docs/decoding.md
// says what each strategy and option is for and how to choose.

#include <cstdint>

#include "common/named_choices.h"
#include "trainer/decode/beam_search.h"
#include "trainer/decode/logits_processing.h"

namespace nmt::decode {

enum class Strategy {
  kBeam,         // beam search with the GNMT length penalty (beam_search.h)
  kGreedy,       // the most probable token at each step (greedy.h)
  kSample,       // ancestral sampling, optionally tempered and truncated (sampling.h)
  kDiverseBeam,  // diverse beam search (Vijayakumar et al. 2018; diverse_beam.h)
};
inline constexpr NamedChoices<Strategy, 4> kStrategies{
    {{{Strategy::kBeam, "beam"},
      {Strategy::kGreedy, "greedy"},
      {Strategy::kSample, "sample"},
      {Strategy::kDiverseBeam, "diverse-beam"}}}};

struct SamplingOptions {
  double temperature = 1.0;      // divides the logits: < 1 sharper, > 1 flatter; 1: the model's
  std::int64_t top_k = 0;        // draw among the k most probable tokens only; 0: all
  double top_p = 1.0;            // draw within the smallest set of mass >= p (nucleus); 1: all
  std::uint64_t seed = 0;        // the generator's seed: the same seed gives the same samples
  std::int64_t num_samples = 1;  // independent samples per sentence, ranked by score
  void validate() const;         // std::invalid_argument naming the field
};

struct DiverseOptions {
  std::int64_t groups = 4;         // G: the beam splits into G groups of beam_size / G beams
  double diversity_penalty = 0.5;  // lambda: per earlier group's choice of the same token
  void validate() const;           // std::invalid_argument naming the field
};

struct DecodeOptions {
  Strategy strategy = Strategy::kBeam;
  // Beam size (beam and diverse beam), alpha (the score of every strategy's hypotheses and
  // n-best order) and the length cap max_length_offset (every strategy). beam.nbest must be left
  // at 1 or equal nbest.
  BeamOptions beam;
  SamplingOptions sampling;      // strategy kSample only
  DiverseOptions diverse;        // strategy kDiverseBeam only
  RepetitionOptions repetition;  // every strategy
  // Hypotheses returned per sentence, best first: at most beam_size (beam, diverse beam: there
  // the best of each group first), num_samples (sampling), 1 (greedy).
  std::int64_t nbest = 1;
  // Throws std::invalid_argument naming the field (e.g. "sampling.top_p") and the allowed range.
  void validate() const;
};

}  // namespace nmt::decode
