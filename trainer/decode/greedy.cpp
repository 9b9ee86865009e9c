#include "trainer/decode/greedy.h"

#include <ATen/ops/arange.h>
#include <ATen/ops/full.h>
#include <ATen/ops/log_softmax.h>
#include <ATen/ops/tensor.h>
#include <torch/utils.h>

#include <algorithm>
#include <utility>

#include "preprocess/vocabulary.h"
#include "trainer/decode/eval_mode.h"

namespace nmt::decode {
namespace {

// The rows still decoding, in the order of the cache's batch dimension.
struct LiveRows {
  std::vector<std::int64_t> row;          // which row of the output each cache row is
  Histories tokens;                       // each one's tokens so far
  std::vector<double> log_probs;          // and their summed log-probability
  std::vector<std::int64_t> max_lengths;  // and its length cap
};

Hypothesis finished(std::vector<std::int64_t> tokens, double log_prob, double alpha) {
  const auto length = static_cast<std::int64_t>(tokens.size()) + 1;  // + EOS
  return {std::move(tokens), log_prob, log_prob / length_penalty(length, alpha)};
}

// Appends each live row's choice (token [live] and its log-probability [live], on the CPU); rows
// that chose EOS or reached their cap move to `out`. Returns the cache rows that go on.
std::vector<std::int64_t> advance_rows(const at::Tensor& tokens, const at::Tensor& log_probs,
                                       double alpha, LiveRows& live, std::vector<Hypothesis>& out) {
  const auto* t = tokens.data_ptr<std::int64_t>();
  const auto* lp = log_probs.data_ptr<float>();
  std::vector<std::int64_t> kept;
  LiveRows next;
  for (std::size_t i = 0; i < live.row.size(); ++i) {
    live.log_probs[i] += lp[i];
    const bool eos = t[i] == preprocess::kEosId;
    if (!eos) live.tokens[i].push_back(t[i]);
    const auto row = static_cast<std::size_t>(live.row[i]);
    if (eos || static_cast<std::int64_t>(live.tokens[i].size()) >= live.max_lengths[i]) {
      out[row] = finished(std::move(live.tokens[i]), live.log_probs[i], alpha);
      continue;
    }
    kept.push_back(static_cast<std::int64_t>(i));
    next.row.push_back(live.row[i]);
    next.tokens.push_back(std::move(live.tokens[i]));
    next.log_probs.push_back(live.log_probs[i]);
    next.max_lengths.push_back(live.max_lengths[i]);
  }
  live = std::move(next);
  return kept;
}

}  // namespace

std::vector<Hypothesis> decode_rows(model::Transformer& model, const at::Tensor& src,
                                    const RowDecoding& rows, const ChooseTokens& choose) {
  TORCH_CHECK(static_cast<std::int64_t>(rows.max_lengths.size()) == src.size(0),
              "decode_rows needs one length cap per sentence");
  torch::NoGradGuard no_grad;
  EvalModeScope eval_mode(*model);
  const auto device = src.device();
  const auto total = src.size(0) * rows.copies;
  const auto expand = at::arange(src.size(0), at::TensorOptions().dtype(at::kLong).device(device))
                          .repeat_interleave(rows.copies);                  // [rows]
  const auto memory = model->encode(src).index_select(0, expand);           // [rows, src_len, d]
  auto cache = model->start_decoding(memory, src.index_select(0, expand));  // [rows, ...]
  std::vector<Hypothesis> out(static_cast<std::size_t>(total));
  LiveRows live;
  for (std::int64_t r = 0; r < total; ++r) {
    const auto cap = rows.max_lengths[static_cast<std::size_t>(r / rows.copies)];
    if (cap < 1) {  // nothing to decode: an empty output
      out[static_cast<std::size_t>(r)] = finished({}, 0.0, rows.alpha);
      continue;
    }
    live.row.push_back(r);
    live.tokens.emplace_back();
    live.log_probs.push_back(0.0);
    live.max_lengths.push_back(cap);
  }
  if (static_cast<std::int64_t>(live.row.size()) < total)
    cache.reorder(at::tensor(live.row, at::TensorOptions().dtype(at::kLong)).to(device));
  auto last = at::full({static_cast<std::int64_t>(live.row.size())}, preprocess::kBosId,
                       at::TensorOptions().dtype(at::kLong).device(device));  // [live]
  while (!live.row.empty()) {
    auto logits = model->decode_step(last, cache).to(at::kFloat);  // [live, V]
    if (rows.repetition.active())
      logits = apply_repetition_options(logits, live.tokens, rows.repetition);
    const auto log_probs = at::log_softmax(logits, -1);                       // [live, V]
    const auto tokens = choose(log_probs);                                    // [live]
    const auto chosen = log_probs.gather(1, tokens.unsqueeze(1)).squeeze(1);  // [live]
    const auto kept = advance_rows(tokens.to(at::kCPU).contiguous(),
                                   chosen.to(at::kCPU).contiguous(), rows.alpha, live, out);
    if (live.row.empty()) break;
    const auto keep = at::tensor(kept, at::TensorOptions().dtype(at::kLong)).to(device);  // [live]
    if (keep.size(0) < tokens.size(0)) cache.reorder(keep);
    last = tokens.index_select(0, keep);  // [live]
  }
  return out;
}

std::vector<std::vector<Hypothesis>> greedy_search(model::Transformer& model, const at::Tensor& src,
                                                   const DecodeOptions& options) {
  auto o = options;
  o.strategy = Strategy::kGreedy;
  o.validate();
  RowDecoding rows{1, output_length_limits(model, src, o.beam.max_length_offset),
                   o.beam.length_penalty, o.repetition};
  auto hypotheses = decode_rows(model, src, rows,
                                [](const at::Tensor& log_probs) { return log_probs.argmax(-1); });
  std::vector<std::vector<Hypothesis>> results;
  for (auto& h : hypotheses) results.push_back({std::move(h)});
  return results;
}

std::vector<std::vector<std::int64_t>> greedy_decode(model::Transformer& model,
                                                     const at::Tensor& src,
                                                     std::int64_t max_length) {
  if (max_length < 0) max_length = src.size(1) + 50;
  max_length = std::min(max_length, model->config().max_positions - 1);
  RowDecoding rows{
      1, std::vector<std::int64_t>(static_cast<std::size_t>(src.size(0)), max_length), 0.0, {}};
  std::vector<std::vector<std::int64_t>> out;
  for (auto& h : decode_rows(model, src, rows,
                             [](const at::Tensor& log_probs) { return log_probs.argmax(-1); }))
    out.push_back(std::move(h.tokens));
  return out;
}

}  // namespace nmt::decode
