#include "trainer/decode/translator.h"

#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>
#include <spdlog/spdlog.h>
#include <torch/utils.h>

#include <algorithm>
#include <numeric>

#include "common/progress.h"
#include "preprocess/cleaning.h"
#include "trainer/decode/greedy.h"
#include "trainer/runtime/precision.h"

namespace nmt::decode {
namespace {

// [rows, longest + 1] with EOS after each source, padded with 0.
at::Tensor source_batch(const std::vector<std::vector<std::int64_t>>& sources) {
  std::size_t longest = 0;
  for (const auto& s : sources) longest = std::max(longest, s.size());
  auto batch =
      at::zeros({static_cast<std::int64_t>(sources.size()), static_cast<std::int64_t>(longest) + 1},
                at::kLong);
  auto* data = batch.data_ptr<std::int64_t>();
  const auto width = static_cast<std::size_t>(batch.size(1));
  for (std::size_t r = 0; r < sources.size(); ++r) {
    std::copy(sources[r].begin(), sources[r].end(), data + r * width);
    data[r * width + sources[r].size()] = preprocess::kEosId;
  }
  return batch;
}

}  // namespace

Translator::Translator(model::Transformer model, const preprocess::Vocabulary& vocab,
                       c10::Device device, TranslateOptions options)
    : model_(std::move(model)), vocab_(vocab), device_(device), options_(options) {
  options_.beam.validate();
  model_->to(device_);
  model_->eval();
}

std::vector<std::int64_t> Translator::encode_line(const std::string& line,
                                                  std::int64_t line_number) const {
  std::string text = line;
  preprocess::repair_utf8(text);
  preprocess::remove_control_chars(text);
  preprocess::normalize_whitespace(text);
  const auto ids = vocab_.encode(text);
  std::vector<std::int64_t> out(ids.begin(), ids.end());
  const auto limit = static_cast<std::size_t>(model_->config().max_positions - 1);  // room for EOS
  if (out.size() > limit) {
    spdlog::warn(
        "input line {}: {} word pieces, more than the model's {} source positions hold: "
        "only the first {} are translated",
        line_number > 0 ? std::to_string(line_number) : std::string("?"), out.size(),
        model_->config().max_positions, limit);
    out.resize(limit);
    ++truncated_;
  }
  return out;
}

std::vector<std::vector<Hypothesis>> Translator::translate_batch(
    const std::vector<std::vector<std::int64_t>>& sources) {
  const auto src = source_batch(sources).to(device_);
  runtime::AutocastScope autocast(options_.precision, device_);
  if (!options_.greedy) return beam_search(model_, src, options_.beam);
  std::vector<std::vector<Hypothesis>> out;
  for (auto& tokens : greedy_decode(model_, src, -1))
    out.push_back({Hypothesis{std::move(tokens), 0.0, 0.0}});
  return out;
}

std::vector<std::vector<Hypothesis>> Translator::translate_ids(
    const std::vector<std::vector<std::int64_t>>& sources) {
  std::vector<std::size_t> order(sources.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return sources[a].size() < sources[b].size();
  });
  std::vector<std::vector<Hypothesis>> results(sources.size());
  ProgressMeter progress("translate", "sentences", 10.0);
  std::size_t start = 0;
  while (start < order.size()) {
    // Sorted ascending, so the last row of a batch is its longest.
    std::size_t end = start + 1;
    while (end < order.size() &&
           static_cast<std::int64_t>((end - start + 1) * (sources[order[end]].size() + 1)) <=
               options_.batch_tokens) {
      ++end;
    }
    std::vector<std::vector<std::int64_t>> batch;
    for (std::size_t i = start; i < end; ++i) batch.push_back(sources[order[i]]);
    auto decoded = translate_batch(batch);
    for (std::size_t i = start; i < end; ++i) results[order[i]] = std::move(decoded[i - start]);
    start = end;
    progress.update(static_cast<std::int64_t>(start),
                    static_cast<double>(start) / static_cast<double>(order.size()));
  }
  progress.finish(static_cast<std::int64_t>(order.size()));
  return results;
}

std::vector<Translation> Translator::translate_lines(const std::vector<std::string>& lines) {
  std::vector<std::vector<std::int64_t>> sources;
  sources.reserve(lines.size());
  for (const auto& line : lines) {
    sources.push_back(encode_line(line, static_cast<std::int64_t>(sources.size()) + 1));
  }
  if (truncated_ > 0)
    spdlog::warn("{} input lines were truncated to the model's {} positions", truncated_,
                 model_->config().max_positions);
  std::vector<Translation> out;
  for (auto& nbest : translate_ids(sources)) {
    Translation t;
    for (const auto& h : nbest)
      t.texts.push_back(vocab_.decode({h.tokens.begin(), h.tokens.end()}));
    t.nbest = std::move(nbest);
    out.push_back(std::move(t));
  }
  return out;
}

at::Tensor Translator::alignment(const std::vector<std::int64_t>& source,
                                 const std::vector<std::int64_t>& output) {
  torch::NoGradGuard no_grad;
  const auto src = source_batch({source}).to(device_);
  std::vector<std::int64_t> tgt_in{preprocess::kBosId};
  tgt_in.insert(tgt_in.end(), output.begin(), output.end());
  const auto tgt =
      at::tensor(tgt_in, at::TensorOptions().dtype(at::kLong)).unsqueeze(0).to(device_);
  return model_->cross_attention_weights(src, tgt)[0].to(at::kCPU);  // [tgt_len, src_len]
}

}  // namespace nmt::decode
