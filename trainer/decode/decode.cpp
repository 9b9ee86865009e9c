#include "trainer/decode/decode.h"

#include <stdexcept>
#include <string>

#include "trainer/decode/diverse_beam.h"
#include "trainer/decode/greedy.h"
#include "trainer/decode/sampling.h"

namespace nmt::decode {
namespace {

void require(bool ok, const std::string& message) {
  if (!ok) throw std::invalid_argument(message);
}

std::string range(std::int64_t low, std::int64_t high, const char* why) {
  return "[" + std::to_string(low) + ", " + std::to_string(high) + "] (" + why + ")";
}

// nbest against what the strategy can return.
void validate_nbest(const DecodeOptions& o) {
  const auto check = [&](std::int64_t high, const char* why) {
    require(o.nbest >= 1 && o.nbest <= high, "nbest must be in " + range(1, high, why) +
                                                 " for the " + kStrategies.name(o.strategy) +
                                                 " strategy, got " + std::to_string(o.nbest));
  };
  switch (o.strategy) {
    case Strategy::kBeam:
    case Strategy::kDiverseBeam:
      check(o.beam.beam_size, "beam.beam_size");
      break;
    case Strategy::kSample:
      check(o.sampling.num_samples, "sampling.num_samples");
      break;
    case Strategy::kGreedy:
      check(1, "greedy decoding finds one hypothesis");
      break;
  }
}

}  // namespace

void DecodeOptions::validate() const {
  require(beam.beam_size >= 1,
          "beam.beam_size must be at least 1, got " + std::to_string(beam.beam_size));
  require(beam.length_penalty >= 0,
          "beam.length_penalty (alpha) must be >= 0, got " + std::to_string(beam.length_penalty));
  require(beam.max_length_offset >= 1,
          "beam.max_length_offset must be positive, got " + std::to_string(beam.max_length_offset));
  require(beam.nbest == 1 || beam.nbest == nbest,
          "beam.nbest is not read by decode(): set DecodeOptions::nbest instead (beam.nbest is " +
              std::to_string(beam.nbest) + ", nbest " + std::to_string(nbest) + ")");
  sampling.validate();
  diverse.validate();
  repetition.validate();
  validate_nbest(*this);
  if (strategy == Strategy::kDiverseBeam) {
    require(beam.beam_size % diverse.groups == 0,
            "diverse.groups must divide beam.beam_size " + std::to_string(beam.beam_size) +
                " (each group holds beam_size / groups beams), got " +
                std::to_string(diverse.groups));
  }
}

std::vector<std::vector<Hypothesis>> decode(model::Transformer& model, const at::Tensor& src,
                                            const DecodeOptions& options,
                                            at::Generator* generator) {
  options.validate();
  switch (options.strategy) {
    case Strategy::kBeam: {
      auto beam = options.beam;
      beam.nbest = options.nbest;
      return beam_search(model, src, beam, options.repetition);
    }
    case Strategy::kGreedy:
      return greedy_search(model, src, options);
    case Strategy::kSample:
      return sample(model, src, options, generator);
    case Strategy::kDiverseBeam:
      return diverse_beam_search(model, src, options);
  }
  throw std::invalid_argument("unknown decoding strategy");
}

}  // namespace nmt::decode
