#include "trainer/decode/beam_search.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/full.h>
#include <ATen/ops/log_softmax.h>
#include <ATen/ops/tensor.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "preprocess/vocabulary.h"

namespace nmt::decode {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct SentenceState {
  std::int64_t max_length = 0;
  std::vector<Hypothesis> finished;
  bool done = false;
};

// The beams of the whole batch, slot b * K + k for beam k of sentence b.
struct Beams {
  std::vector<std::vector<std::int64_t>> tokens;
  std::vector<double> scores;
  std::vector<std::int64_t> order;  // slot each new beam continues (for the cache)
  std::vector<std::int64_t> last;   // token each new beam just produced
};

Hypothesis finish(std::vector<std::int64_t> tokens, double log_prob, double alpha) {
  const auto length = static_cast<std::int64_t>(tokens.size()) + 1;  // + EOS
  return {std::move(tokens), log_prob, log_prob / length_penalty(length, alpha)};
}

// Picks the next beams of sentence b from its 2K best candidates: EOS among the top K ends a
// hypothesis, other candidates continue until K beams are filled.
void advance_sentence(std::int64_t b, std::int64_t step, const float* values,
                      const std::int64_t* indices, std::int64_t vocab, const BeamOptions& o,
                      const Beams& current, Beams& next, SentenceState& state) {
  const std::int64_t K = o.beam_size;
  std::int64_t chosen = 0;
  for (std::int64_t j = 0; j < 2 * K && chosen < K; ++j) {
    const double value = values[j];
    if (!std::isfinite(value)) break;
    const std::int64_t slot = b * K + indices[j] / vocab;
    const std::int64_t token = indices[j] % vocab;
    if (token == preprocess::kEosId) {
      if (j < K)
        state.finished.push_back(
            finish(current.tokens[static_cast<std::size_t>(slot)], value, o.length_penalty));
      continue;
    }
    const auto to = static_cast<std::size_t>(b * K + chosen++);
    next.tokens[to] = current.tokens[static_cast<std::size_t>(slot)];
    next.tokens[to].push_back(token);
    next.scores[to] = value;
    next.order[to] = slot;
    next.last[to] = token;
  }
  if (step + 1 >= state.max_length) {  // out of length: the live beams end here
    for (std::int64_t k = 0; k < chosen; ++k) {
      const auto slot = static_cast<std::size_t>(b * K + k);
      state.finished.push_back(finish(next.tokens[slot], next.scores[slot], o.length_penalty));
    }
    state.done = true;
  }
  if (static_cast<std::int64_t>(state.finished.size()) >= K || chosen == 0) state.done = true;
}

// Keeps the slots of a finished sentence alive as inert beams so the batch keeps its shape.
void park_sentence(std::int64_t b, std::int64_t K, std::int64_t step, Beams& next) {
  for (std::int64_t k = 0; k < K; ++k) {
    const auto slot = static_cast<std::size_t>(b * K + k);
    next.scores[slot] = kNegInf;
    next.order[slot] = b * K;
    next.last[slot] = preprocess::kEosId;
    next.tokens[slot].assign(static_cast<std::size_t>(step + 1),
                             preprocess::kEosId);  // same length as live beams
  }
}

at::Tensor to_tensor(const std::vector<std::int64_t>& v, const at::Device& device) {
  return at::tensor(v, at::TensorOptions().dtype(at::kLong)).to(device);
}

// The next-token logits [slots, V] by running the decoder over every beam's whole prefix: what
// the cache saves. All beams hold the same number of tokens at a given step.
at::Tensor recompute_last(model::Transformer& model, const Beams& beams, const at::Tensor& memory,
                          const at::Tensor& src, const at::Device& device) {
  std::vector<std::int64_t> prefix;
  const auto length = static_cast<std::int64_t>(beams.tokens.front().size()) + 1;
  for (const auto& tokens : beams.tokens) {
    prefix.push_back(preprocess::kBosId);
    prefix.insert(prefix.end(), tokens.begin(), tokens.end());
  }
  const auto tgt = to_tensor(prefix, device).reshape({-1, length});  // [slots, length]
  return model->logits(model->decode(tgt, memory, src).select(1, length - 1));
}

// Each sentence's length cap: its source length plus the offset, within the model's position
// table (positions beyond it cannot be decoded).
std::vector<SentenceState> initial_states(model::Transformer& model, const at::Tensor& src,
                                          const BeamOptions& o) {
  const auto lengths = src.ne(preprocess::kPadId).sum(1).to(at::kCPU);  // [batch]
  std::vector<SentenceState> states(static_cast<std::size_t>(src.size(0)));
  for (std::size_t b = 0; b < states.size(); ++b) {
    states[b].max_length =
        std::min(lengths[static_cast<std::int64_t>(b)].item<std::int64_t>() + o.max_length_offset,
                 model->config().max_positions - 1);
  }
  return states;
}

// The 2K best continuations of each sentence over its K beams, on the CPU: scores and indices
// into K * V, both [batch, 2K] (fewer when K * V is smaller).
std::pair<at::Tensor, at::Tensor> top_candidates(const at::Tensor& logits, const Beams& beams,
                                                 std::int64_t batch, std::int64_t K) {
  const auto log_probs = at::log_softmax(logits.to(at::kFloat), -1);  // [slots, V]
  const auto vocab = log_probs.size(1);
  const auto scores = at::tensor(beams.scores, at::TensorOptions().dtype(at::kDouble))
                          .to(log_probs.device(), at::kFloat);
  const auto total = (log_probs + scores.unsqueeze(1)).reshape({batch, K * vocab});
  const auto top = total.topk(std::min<std::int64_t>(2 * K, K * vocab), 1);
  return {std::get<0>(top).to(at::kCPU).contiguous(), std::get<1>(top).to(at::kCPU).contiguous()};
}

// Each sentence's finished hypotheses, best normalized score first, at most nbest.
std::vector<std::vector<Hypothesis>> best_hypotheses(std::vector<SentenceState>& states,
                                                     std::int64_t nbest) {
  std::vector<std::vector<Hypothesis>> results;
  for (auto& state : states) {
    auto& finished = state.finished;
    std::stable_sort(finished.begin(), finished.end(),
                     [](const Hypothesis& x, const Hypothesis& y) { return x.score > y.score; });
    finished.resize(std::min<std::size_t>(finished.size(), static_cast<std::size_t>(nbest)));
    results.push_back(std::move(finished));
  }
  return results;
}

}  // namespace

void BeamOptions::validate() const {
  if (beam_size < 1) throw std::invalid_argument("beam size must be at least 1");
  if (nbest < 1 || nbest > beam_size)
    throw std::invalid_argument("nbest must be in [1, beam size]");
  if (length_penalty < 0) throw std::invalid_argument("length penalty alpha must be >= 0");
  if (max_length_offset < 1) throw std::invalid_argument("max length offset must be positive");
}

double length_penalty(std::int64_t length, double alpha) {
  return std::pow((5.0 + static_cast<double>(length)) / 6.0, alpha);
}

std::vector<std::vector<Hypothesis>> beam_search(model::Transformer& model, const at::Tensor& src,
                                                 const BeamOptions& o) {
  o.validate();
  torch::NoGradGuard no_grad;
  const bool was_training = model->is_training();
  model->eval();
  const std::int64_t B = src.size(0), K = o.beam_size, slots = B * K;
  const auto device = src.device();
  auto states = initial_states(model, src, o);
  std::int64_t longest = 0;
  for (const auto& state : states) longest = std::max(longest, state.max_length);
  const auto expand =
      at::arange(B, at::TensorOptions().dtype(at::kLong).device(device)).repeat_interleave(K);
  const auto memory = model->encode(src).index_select(0, expand);  // [slots, src_len, d_model]
  const auto src_slots = src.index_select(0, expand);              // [slots, src_len]
  auto cache = model->start_decoding(memory, src_slots);
  Beams beams{std::vector<std::vector<std::int64_t>>(static_cast<std::size_t>(slots)),
              std::vector<double>(static_cast<std::size_t>(slots), kNegInf),
              {},
              {}};
  for (std::int64_t b = 0; b < B; ++b) beams.scores[static_cast<std::size_t>(b * K)] = 0.0;
  auto last =
      at::full({slots}, preprocess::kBosId, at::TensorOptions().dtype(at::kLong).device(device));
  for (std::int64_t step = 0; step < longest; ++step) {
    const auto logits = o.use_cache ? model->decode_step(last, cache)
                                    : recompute_last(model, beams, memory, src_slots, device);
    const auto [values, indices] = top_candidates(logits, beams, B, K);
    const auto width = values.size(1);
    Beams next{beams.tokens, std::vector<double>(static_cast<std::size_t>(slots), kNegInf),
               std::vector<std::int64_t>(static_cast<std::size_t>(slots), 0),
               std::vector<std::int64_t>(static_cast<std::size_t>(slots), preprocess::kEosId)};
    bool all_done = true;
    for (std::int64_t b = 0; b < B; ++b) {
      auto& state = states[static_cast<std::size_t>(b)];
      if (!state.done) {
        advance_sentence(b, step, values.data_ptr<float>() + b * width,
                         indices.data_ptr<std::int64_t>() + b * width, logits.size(1), o, beams,
                         next, state);
      }
      if (state.done) park_sentence(b, K, step, next);
      all_done = all_done && state.done;
    }
    if (all_done) break;
    if (o.use_cache) cache.reorder(to_tensor(next.order, device));
    last = to_tensor(next.last, device);
    beams = std::move(next);
  }
  if (was_training) model->train();
  return best_hypotheses(states, o.nbest);
}

}  // namespace nmt::decode
