#include "trainer/decode/beam_search.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/from_blob.h>
#include <ATen/ops/full.h>
#include <ATen/ops/log_softmax.h>
#include <ATen/ops/ones.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

#include "preprocess/vocabulary.h"
#include "trainer/decode/eval_mode.h"

namespace nmt::decode {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

// One group of one sentence (without groups: the sentence).
struct SentenceState {
  std::int64_t max_length = 0;
  std::vector<Hypothesis> finished;
  bool done = false;
};

// The beams of the whole batch, slot b * K + k for beam k of sentence b; group g of G holds the
// slots b * K + g * K / G + k for k < K / G.
struct Beams {
  std::vector<std::vector<std::int64_t>> tokens;
  std::vector<double> scores;
  std::vector<std::int64_t> order;  // slot each new beam continues (for the cache)
  std::vector<std::int64_t> last;   // token each new beam just produced
};

// Where one group's beams lie: slots first .. first + size - 1 of the sentence at sentence_first.
struct GroupSlots {
  std::int64_t first;
  std::int64_t size;
  std::int64_t sentence_first;
};

// One group's best candidates for one sentence, best first, as ranked: the ranking values (the
// scores less the diversity penalty), the plain scores (the same array without a penalty), and
// indices into the group's beams * vocab.
struct Candidates {
  const float* values;
  const float* scores;
  const std::int64_t* indices;
  std::int64_t count;
  std::int64_t vocab;
};

Hypothesis finish(std::vector<std::int64_t> tokens, double log_prob, double alpha) {
  const auto length = static_cast<std::int64_t>(tokens.size()) + 1;  // + EOS
  return {std::move(tokens), log_prob, log_prob / length_penalty(length, alpha)};
}

// Picks the next beams of one group from its 2K best candidates (K: the group's size): EOS among
// the top K ends a hypothesis, other candidates continue until K beams are filled. Appends the
// tokens chosen (EOS included) to `chosen_tokens`, for the later groups' diversity penalty.
void advance_group(const GroupSlots& group, std::int64_t step, const Candidates& c,
                   const BeamOptions& o, const Beams& current, Beams& next, SentenceState& state,
                   std::vector<std::int64_t>& chosen_tokens) {
  const std::int64_t K = group.size;
  std::int64_t chosen = 0;
  for (std::int64_t j = 0; j < c.count && chosen < K; ++j) {
    if (!std::isfinite(c.values[j])) break;
    const double value = c.scores[j];
    const std::int64_t slot = group.first + c.indices[j] / c.vocab;
    const std::int64_t token = c.indices[j] % c.vocab;
    if (token == preprocess::kEosId) {
      if (j < K) {
        state.finished.push_back(
            finish(current.tokens[static_cast<std::size_t>(slot)], value, o.length_penalty));
        chosen_tokens.push_back(token);
      }
      continue;
    }
    const auto to = static_cast<std::size_t>(group.first + chosen++);
    next.tokens[to] = current.tokens[static_cast<std::size_t>(slot)];
    next.tokens[to].push_back(token);
    next.scores[to] = value;
    next.order[to] = slot;
    next.last[to] = token;
    chosen_tokens.push_back(token);
  }
  if (step + 1 >= state.max_length) {  // out of length: the live beams end here
    for (std::int64_t k = 0; k < chosen; ++k) {
      const auto slot = static_cast<std::size_t>(group.first + k);
      state.finished.push_back(finish(next.tokens[slot], next.scores[slot], o.length_penalty));
    }
    state.done = true;
  }
  if (static_cast<std::int64_t>(state.finished.size()) >= K || chosen == 0) state.done = true;
}

// Keeps the slots of a finished group alive as inert beams so the batch keeps its shape.
void park_group(const GroupSlots& group, std::int64_t step, Beams& next) {
  for (std::int64_t k = 0; k < group.size; ++k) {
    const auto slot = static_cast<std::size_t>(group.first + k);
    next.scores[slot] = kNegInf;
    next.order[slot] = group.sentence_first;
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
class CachedSteps : public DecoderSteps {
 public:
  CachedSteps(model::Transformer& model, const at::Tensor& memory, const at::Tensor& src,
              std::int64_t K)
      : model_(model), cache_(model->start_decoding(memory, src, K)) {}
  at::Tensor logits(const at::Tensor& last,
                    const std::vector<std::vector<std::int64_t>>&) override {
    return model_->decode_step(last, cache_);  // [slots, V]
  }
  void reorder(const at::Tensor& order, const at::Tensor* kept) override {
    cache_.reorder(order, kept != nullptr ? *kept : at::Tensor());
  }

 private:
  model::Transformer& model_;
  model::DecoderCache cache_;
};

// Every beam's continuations: the next token's log-probability (after the repetition options)
// plus the beam's score, [batch, groups, K / groups * V].
at::Tensor candidate_scores(const at::Tensor& logits, const Beams& beams, std::int64_t batch,
                            std::int64_t groups, const RepetitionOptions& repetition) {
  auto processed = logits.to(at::kFloat);  // [slots, V]
  if (repetition.active())
    processed = apply_repetition_options(processed, beams.tokens, repetition);
  const auto log_probs = at::log_softmax(processed, -1);  // [slots, V]
  const auto scores = at::tensor(beams.scores, at::TensorOptions().dtype(at::kDouble))
                          .to(log_probs.device(), at::kFloat);  // [slots]
  return (log_probs + scores.unsqueeze(1)).reshape({batch, groups, -1});
}

// How often the earlier groups chose each token at this step, per sentence: [batch, V] float.
at::Tensor token_counts(const std::vector<std::vector<std::int64_t>>& chosen, std::int64_t vocab,
                        const at::Device& device) {
  std::vector<std::int64_t> flat;
  for (std::size_t b = 0; b < chosen.size(); ++b) {
    for (const auto token : chosen[b]) flat.push_back(static_cast<std::int64_t>(b) * vocab + token);
  }
  const auto batch = static_cast<std::int64_t>(chosen.size());
  auto counts = at::zeros({batch * vocab}, at::TensorOptions().dtype(at::kFloat).device(device));
  if (!flat.empty()) {
    const auto index = to_tensor(flat, device);  // [choices]
    counts.index_add_(0, index, at::ones({index.size(0)}, counts.options()));
  }
  return counts.view({batch, vocab});
}

// One group's 2K best candidates per sentence on the CPU, [batch, 2K] each (fewer when K * V is
// smaller): ranking values, plain scores and indices into K * V (K: the group's size).
struct GroupTop {
  at::Tensor values, scores, indices;
};

GroupTop group_candidates(const at::Tensor& totals, std::int64_t g, std::int64_t vocab,
                          double diversity_penalty,
                          const std::vector<std::vector<std::int64_t>>& earlier) {
  const auto group = totals.select(1, g);  // [batch, K * V]
  const auto batch = group.size(0), K = group.size(1) / vocab;
  const auto width = std::min<std::int64_t>(2 * K, group.size(1));
  if (g == 0 || diversity_penalty == 0.0) {
    const auto top = group.topk(width, 1);
    const auto values = std::get<0>(top).to(at::kCPU).contiguous();
    return {values, values, std::get<1>(top).to(at::kCPU).contiguous()};
  }
  const auto penalty = diversity_penalty * token_counts(earlier, vocab, group.device());
  const auto ranked =
      (group.reshape({batch, K, vocab}) - penalty.unsqueeze(1)).reshape({batch, K * vocab});
  const auto [values, indices] = ranked.topk(width, 1);  // [batch, width] each
  return {values.to(at::kCPU).contiguous(), group.gather(1, indices).to(at::kCPU).contiguous(),
          indices.to(at::kCPU).contiguous()};
}

// The search's shape: B sentences of K beams each, in G groups of Kg = K / G beams.
struct Shape {
  std::int64_t B, K, G, Kg;
};

// Each group's length cap, group g of sentence b at b * G + g.
std::vector<SentenceState> initial_states(model::Transformer& model, const at::Tensor& src,
                                          const BeamOptions& o, const Shape& shape) {
  const auto limits = output_length_limits(model, src, o.max_length_offset);
  std::vector<SentenceState> states(static_cast<std::size_t>(shape.B * shape.G));
  for (std::size_t i = 0; i < states.size(); ++i)
    states[i].max_length = limits[i / static_cast<std::size_t>(shape.G)];
  return states;
}

// One step of every group in turn, from the candidates totals [live, G, Kg * V] of the live
// sentences (`live`: their indices in the batch; slot b * K + k is beam k of live sentence b):
// fills `next` and returns whether each live sentence is done (all its groups).
std::vector<bool> advance_groups(const at::Tensor& totals, std::int64_t step, const Shape& shape,
                                 const std::vector<std::int64_t>& live, double diversity_penalty,
                                 const BeamOptions& o, const Beams& beams, Beams& next,
                                 std::vector<SentenceState>& states) {
  const auto vocab = totals.size(2) / shape.Kg;
  const auto count = static_cast<std::int64_t>(live.size());
  std::vector<std::vector<std::int64_t>> chosen(live.size());  // this step
  std::vector<bool> done(live.size(), true);
  for (std::int64_t g = 0; g < shape.G; ++g) {
    const auto top = group_candidates(totals, g, vocab, diversity_penalty, chosen);
    const auto width = top.values.size(1);
    for (std::int64_t b = 0; b < count; ++b) {
      const auto i = static_cast<std::size_t>(b);
      auto& state = states[static_cast<std::size_t>(live[i] * shape.G + g)];
      const GroupSlots group{b * shape.K + g * shape.Kg, shape.Kg, b * shape.K};
      if (!state.done) {
        const Candidates c{top.values.data_ptr<float>() + b * width,
                           top.scores.data_ptr<float>() + b * width,
                           top.indices.data_ptr<std::int64_t>() + b * width, width, vocab};
        advance_group(group, step, c, o, beams, next, state, chosen[i]);
      }
      if (state.done) park_group(group, step, next);
      done[i] = done[i] && state.done;
    }
  }
  return done;
}

// Beams `next` of the sentences that go on: the slots of the live sentences not done, in order.
// Returns those sentences' positions among the live ones; `live` keeps their batch indices.
std::vector<std::int64_t> drop_done(const std::vector<bool>& done, std::int64_t K,
                                    std::vector<std::int64_t>& live, Beams& next) {
  std::vector<std::int64_t> kept, kept_live;
  if (std::find(done.begin(), done.end(), true) == done.end()) {  // the usual step: all go on
    kept.resize(done.size());
    std::iota(kept.begin(), kept.end(), 0);
    return kept;
  }
  Beams compact;
  for (std::size_t b = 0; b < done.size(); ++b) {
    if (done[b]) continue;
    kept.push_back(static_cast<std::int64_t>(b));
    kept_live.push_back(live[b]);
    for (std::int64_t k = 0; k < K; ++k) {
      const auto slot = static_cast<std::size_t>(static_cast<std::int64_t>(b) * K + k);
      compact.tokens.push_back(std::move(next.tokens[slot]));
      compact.scores.push_back(next.scores[slot]);
      compact.order.push_back(next.order[slot]);
      compact.last.push_back(next.last[slot]);
    }
  }
  live = std::move(kept_live);
  next = std::move(compact);
  return kept;
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

std::vector<std::int64_t> output_length_limits(model::Transformer& model, const at::Tensor& src,
                                               std::int64_t max_length_offset) {
  const auto lengths = src.ne(preprocess::kPadId).sum(1).to(at::kCPU);  // [batch]
  std::vector<std::int64_t> limits(static_cast<std::size_t>(src.size(0)));
  for (std::size_t b = 0; b < limits.size(); ++b) {
    limits[b] =
        std::min(lengths[static_cast<std::int64_t>(b)].item<std::int64_t>() + max_length_offset,
                 model->config().max_positions - 1);
  }
  return limits;
}

std::vector<std::vector<std::vector<Hypothesis>>> grouped_beam_search(
    model::Transformer& model, const at::Tensor& src, const BeamOptions& o, std::int64_t groups,
    double diversity_penalty, const RepetitionOptions& repetition,
    const DecoderStepsFactory& make_steps) {
  o.validate();
  repetition.validate();
  if (groups < 1 || o.beam_size % groups != 0)
    throw std::invalid_argument("beam groups must divide the beam size " +
                                std::to_string(o.beam_size) + ", got " + std::to_string(groups));
  torch::NoGradGuard no_grad;
  EvalModeScope eval_mode(*model);
  const Shape shape{src.size(0), o.beam_size, groups, o.beam_size / groups};
  const auto device = src.device();
  const auto index_options = at::TensorOptions().dtype(at::kLong).device(device);
  auto states = initial_states(model, src, o, shape);
  std::int64_t longest = 0;
  for (const auto& state : states) longest = std::max(longest, state.max_length);
  // The sentences still searched (indices into the batch) and their slots: K per sentence, which
  // share the sentence's encoder output and cross-attention keys/values. A finished sentence
  // leaves the batch.
  std::vector<std::int64_t> live(static_cast<std::size_t>(shape.B));
  std::iota(live.begin(), live.end(), 0);
  const auto memory = model->encode(src);  // [B, src_len, d_model]
  const auto steps = make_steps(model, memory, src, shape.K);
  const auto slots = shape.B * shape.K;
  Beams beams{std::vector<std::vector<std::int64_t>>(static_cast<std::size_t>(slots)),
              std::vector<double>(static_cast<std::size_t>(slots), kNegInf),
              {},
              {}};
  for (std::int64_t s = 0; s < slots; s += shape.Kg) beams.scores[static_cast<std::size_t>(s)] = 0;
  auto last = at::full({slots}, preprocess::kBosId, index_options);  // [slots]
  for (std::int64_t step = 0; step < longest; ++step) {
    const auto count = static_cast<std::int64_t>(live.size());
    const auto n = static_cast<std::size_t>(count * shape.K);
    const auto logits = steps->logits(last, beams.tokens);  // [live * K, V]
    const auto totals = candidate_scores(logits, beams, count, shape.G, repetition);
    Beams next{beams.tokens, std::vector<double>(n, kNegInf), std::vector<std::int64_t>(n, 0),
               std::vector<std::int64_t>(n, preprocess::kEosId)};
    const auto done =
        advance_groups(totals, step, shape, live, diversity_penalty, o, beams, next, states);
    const auto kept = drop_done(done, shape.K, live, next);
    if (live.empty()) break;
    if (kept.size() < done.size()) {
      const auto kept_sentences = to_tensor(kept, device);
      steps->reorder(to_tensor(next.order, device), &kept_sentences);
    } else {
      steps->reorder(to_tensor(next.order, device), nullptr);
    }
    last = to_tensor(next.last, device);
    beams = std::move(next);
  }
  std::vector<std::vector<std::vector<Hypothesis>>> finished(static_cast<std::size_t>(shape.B));
  for (std::size_t i = 0; i < states.size(); ++i)
    finished[i / static_cast<std::size_t>(groups)].push_back(std::move(states[i].finished));
  return finished;
}

std::unique_ptr<DecoderSteps> cached_steps(model::Transformer& model, const at::Tensor& memory,
                                           const at::Tensor& src, std::int64_t K) {
  return std::make_unique<CachedSteps>(model, memory, src, K);
}

std::vector<std::vector<Hypothesis>> beam_search(model::Transformer& model, const at::Tensor& src,
                                                 const BeamOptions& o,
                                                 const RepetitionOptions& repetition,
                                                 const DecoderStepsFactory& steps) {
  auto groups = grouped_beam_search(model, src, o, 1, 0.0, repetition, steps);
  // Each sentence's finished hypotheses, best normalized score first, at most nbest.
  std::vector<std::vector<Hypothesis>> results;
  for (auto& sentence : groups) {
    auto& finished = sentence.front();
    std::stable_sort(finished.begin(), finished.end(),
                     [](const Hypothesis& x, const Hypothesis& y) { return x.score > y.score; });
    finished.resize(std::min<std::size_t>(finished.size(), static_cast<std::size_t>(o.nbest)));
    results.push_back(std::move(finished));
  }
  return results;
}

}  // namespace nmt::decode
