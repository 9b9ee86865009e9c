#include "trainer/decode/sampling.h"

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/Context.h>
#include <ATen/ops/multinomial.h>
#include <ATen/ops/softmax.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>

#include "trainer/decode/greedy.h"
#include "trainer/decode/logits_processing.h"

namespace nmt::decode {

void SamplingOptions::validate() const {
  if (!(temperature > 0) || !std::isfinite(temperature))
    throw std::invalid_argument(
        "sampling.temperature must be positive (1: the model's own "
        "distribution; for temperature 0 use the greedy strategy), got " +
        std::to_string(temperature));
  if (top_k < 0)
    throw std::invalid_argument("sampling.top_k must be >= 0 (0: off), got " +
                                std::to_string(top_k));
  if (!(top_p > 0 && top_p <= 1))
    throw std::invalid_argument("sampling.top_p must be in (0, 1] (1: off), got " +
                                std::to_string(top_p));
  if (num_samples < 1)
    throw std::invalid_argument("sampling.num_samples must be at least 1, got " +
                                std::to_string(num_samples));
}

at::Generator seeded_generator(const at::Device& device, std::uint64_t seed) {
  if (device.is_cpu()) return at::detail::createCPUGenerator(seed);
  auto generator = at::globalContext().defaultGenerator(device).clone();
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_current_seed(seed);
  return generator;
}

at::Tensor draw_tokens(const at::Tensor& log_probs, const SamplingOptions& options,
                       at::Generator& generator) {
  const auto tempered = apply_temperature(log_probs, options.temperature);  // [rows, V]
  const auto shaped = top_p_filter(top_k_filter(tempered, options.top_k), options.top_p);
  const auto probs = at::softmax(shaped, -1);                     // [rows, V]
  return at::multinomial(probs, 1, false, generator).squeeze(1);  // [rows]
}

std::vector<std::vector<Hypothesis>> sample(model::Transformer& model, const at::Tensor& src,
                                            const DecodeOptions& options,
                                            at::Generator* generator) {
  auto o = options;
  o.strategy = Strategy::kSample;
  o.validate();
  at::Generator own;
  if (!generator) {
    own = seeded_generator(src.device(), o.sampling.seed);
    generator = &own;
  }
  const RowDecoding rows{o.sampling.num_samples,
                         output_length_limits(model, src, o.beam.max_length_offset),
                         o.beam.length_penalty, o.repetition};
  auto samples = decode_rows(model, src, rows, [&](const at::Tensor& log_probs) {
    return draw_tokens(log_probs, o.sampling, *generator);
  });
  const auto N = static_cast<std::size_t>(o.sampling.num_samples);
  std::vector<std::vector<Hypothesis>> results;
  for (std::size_t first = 0; first < samples.size(); first += N) {
    std::vector<Hypothesis> nbest(std::make_move_iterator(samples.begin() + first),
                                  std::make_move_iterator(samples.begin() + first + N));
    std::stable_sort(nbest.begin(), nbest.end(),
                     [](const Hypothesis& x, const Hypothesis& y) { return x.score > y.score; });
    nbest.resize(static_cast<std::size_t>(o.nbest));
    results.push_back(std::move(nbest));
  }
  return results;
}

}  // namespace nmt::decode
