#include "trainer/data/batching.h"

#include <ATen/ops/zeros.h>

#include <algorithm>
#include <random>

#include "preprocess/vocabulary.h"

namespace nmt::data {
namespace {

// Fisher-Yates with raw engine output: the same order with every standard library, unlike
// std::shuffle and the std distributions.
template <typename T>
void shuffle(std::vector<T>& items, std::mt19937_64& rng) {
  for (std::size_t i = items.size(); i > 1; --i) {
    std::swap(items[i - 1], items[static_cast<std::size_t>(rng() % i)]);
  }
}

std::mt19937_64 epoch_rng(std::uint64_t seed, std::int64_t epoch) {
  std::seed_seq sequence{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                         static_cast<std::uint32_t>(epoch), 0x6e6d74u};
  return std::mt19937_64(sequence);
}

}  // namespace

TokenBatcher::TokenBatcher(const preprocess::ShardDataset& data, const DataConfig& config,
                           std::uint64_t seed)
    : data_(data), config_(config), seed_(seed) {
  std::int64_t tgt_total = 0;
  for (std::int64_t i = 0; i < data.size(); ++i) {
    const auto pair = data.pair(i);
    // +1: EOS on the source, BOS/EOS on the target sides.
    const auto src_len = static_cast<std::int64_t>(pair.src.size) + 1;
    const auto tgt_len = static_cast<std::int64_t>(pair.tgt.size) + 1;
    if (src_len > config.max_length || tgt_len > config.max_length) {
      ++skipped_;
      continue;
    }
    eligible_.push_back(i);
    tgt_total += tgt_len;
  }
  const double mean_tgt =
      eligible_.empty() ? 1.0 : static_cast<double>(tgt_total) / eligible_.size();
  const auto per_batch =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(config.max_tgt_tokens / mean_tgt));
  pool_pairs_ = config.bucket_pool * per_batch;
}

void TokenBatcher::sort_by_length(std::vector<std::int64_t>::iterator begin,
                                  std::vector<std::int64_t>::iterator end) const {
  std::stable_sort(begin, end, [this](std::int64_t a, std::int64_t b) {
    const auto pa = data_.pair(a), pb = data_.pair(b);
    return std::make_pair(pa.src.size, pa.tgt.size) < std::make_pair(pb.src.size, pb.tgt.size);
  });
}

BatchPlan TokenBatcher::fill_batches(const std::vector<std::int64_t>& sorted) const {
  BatchPlan plan;
  std::vector<std::int64_t> current;
  std::int64_t max_src = 0, max_tgt = 0;
  for (const auto index : sorted) {
    const auto pair = data_.pair(index);
    const auto src_len = static_cast<std::int64_t>(pair.src.size) + 1;
    const auto tgt_len = static_cast<std::int64_t>(pair.tgt.size) + 1;
    const auto rows = static_cast<std::int64_t>(current.size()) + 1;
    const bool fits = rows * std::max(max_src, src_len) <= config_.max_src_tokens &&
                      rows * std::max(max_tgt, tgt_len) <= config_.max_tgt_tokens;
    if (!fits && !current.empty()) {
      plan.push_back(std::move(current));
      current.clear();
      max_src = max_tgt = 0;
    }
    current.push_back(index);
    max_src = std::max(max_src, src_len);
    max_tgt = std::max(max_tgt, tgt_len);
  }
  if (!current.empty()) plan.push_back(std::move(current));
  return plan;
}

BatchPlan TokenBatcher::epoch_plan(std::int64_t epoch) const {
  auto rng = epoch_rng(seed_, epoch);
  auto order = eligible_;
  shuffle(order, rng);
  BatchPlan plan;
  for (std::size_t start = 0; start < order.size();
       start += static_cast<std::size_t>(pool_pairs_)) {
    const auto end = std::min(order.size(), start + static_cast<std::size_t>(pool_pairs_));
    sort_by_length(order.begin() + static_cast<std::ptrdiff_t>(start),
                   order.begin() + static_cast<std::ptrdiff_t>(end));
    auto pool = fill_batches({order.begin() + static_cast<std::ptrdiff_t>(start),
                              order.begin() + static_cast<std::ptrdiff_t>(end)});
    for (auto& batch : pool) plan.push_back(std::move(batch));
  }
  shuffle(plan, rng);
  return plan;
}

BatchPlan TokenBatcher::sequential_plan() const {
  auto order = eligible_;
  sort_by_length(order.begin(), order.end());
  return fill_batches(order);
}

Batch TokenBatcher::make_batch(const std::vector<std::int64_t>& indices) const {
  std::int64_t src_len = 0, tgt_len = 0;
  for (const auto i : indices) {
    const auto pair = data_.pair(i);
    src_len = std::max<std::int64_t>(src_len, static_cast<std::int64_t>(pair.src.size) + 1);
    tgt_len = std::max<std::int64_t>(tgt_len, static_cast<std::int64_t>(pair.tgt.size) + 1);
  }
  const auto rows = static_cast<std::int64_t>(indices.size());
  auto src = at::zeros({rows, src_len}, at::kLong);      // [batch, src_len], 0 = pad
  auto tgt_in = at::zeros({rows, tgt_len}, at::kLong);   // [batch, tgt_len]
  auto tgt_out = at::zeros({rows, tgt_len}, at::kLong);  // [batch, tgt_len]
  auto* s = src.data_ptr<std::int64_t>();
  auto* ti = tgt_in.data_ptr<std::int64_t>();
  auto* to = tgt_out.data_ptr<std::int64_t>();
  Batch batch;
  for (std::int64_t r = 0; r < rows; ++r) {
    const auto pair = data_.pair(indices[static_cast<std::size_t>(r)]);
    std::copy(pair.src.begin(), pair.src.end(), s + r * src_len);
    s[r * src_len + static_cast<std::int64_t>(pair.src.size)] = preprocess::kEosId;
    ti[r * tgt_len] = preprocess::kBosId;
    std::copy(pair.tgt.begin(), pair.tgt.end(), ti + r * tgt_len + 1);
    std::copy(pair.tgt.begin(), pair.tgt.end(), to + r * tgt_len);
    to[r * tgt_len + static_cast<std::int64_t>(pair.tgt.size)] = preprocess::kEosId;
    batch.src_tokens += static_cast<std::int64_t>(pair.src.size) + 1;
    batch.tgt_tokens += static_cast<std::int64_t>(pair.tgt.size) + 1;
  }
  batch.src = src;
  batch.tgt_in = tgt_in;
  batch.tgt_out = tgt_out;
  return batch;
}

}  // namespace nmt::data
