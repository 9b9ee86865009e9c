#include "trainer/data/batching.h"

#include <algorithm>
#include <random>

#include "common/mix64.h"
#include "trainer/data/block_permutation.h"
#include "trainer/data/padded_batch.h"

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

std::mt19937_64 pool_rng(std::uint64_t seed, std::int64_t epoch, std::int64_t pool) {
  std::seed_seq sequence{
      static_cast<std::uint32_t>(seed),       static_cast<std::uint32_t>(seed >> 32),
      static_cast<std::uint32_t>(epoch),      static_cast<std::uint32_t>(pool),
      static_cast<std::uint32_t>(pool >> 32), 0x6e6d74u};
  return std::mt19937_64(sequence);
}

struct Entry {
  std::int64_t index;
  preprocess::PairLengths lengths;
};

// Stable: pairs of equal lengths keep the (shuffled) order they came in.
void sort_by_length(std::vector<Entry>& entries) {
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::make_pair(a.lengths.src, a.lengths.tgt) <
           std::make_pair(b.lengths.src, b.lengths.tgt);
  });
}

// Cuts length-sorted pairs into batches whose padded sizes stay within both budgets.
BatchPlan fill_batches(const std::vector<Entry>& sorted, const DataConfig& config) {
  BatchPlan plan;
  std::vector<std::int64_t> current;
  PaddedBudget src(config.max_src_tokens), tgt(config.max_tgt_tokens);
  for (const auto& entry : sorted) {
    if (!(src.fits(entry.lengths.src) && tgt.fits(entry.lengths.tgt))) {
      plan.push_back(std::move(current));
      current.clear();
      src.clear();
      tgt.clear();
    }
    current.push_back(entry.index);
    src.add(entry.lengths.src);
    tgt.add(entry.lengths.tgt);
  }
  if (!current.empty()) plan.push_back(std::move(current));
  return plan;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

TokenBatcher::TokenBatcher(const preprocess::ShardDataset& data, const DataConfig& config,
                           std::uint64_t seed)
    : data_(data), config_(config), seed_(seed) {
  std::int64_t tgt_total = 0;
  data.scan_lengths([&](std::int64_t, const preprocess::PairLengths& lengths) {
    if (!eligible(lengths)) {
      ++skipped_;
      return;
    }
    ++eligible_;
    tgt_total += lengths.tgt + 1;  // + BOS/EOS
  });
  const double mean_tgt = eligible_ == 0 ? 1.0 : static_cast<double>(tgt_total) / eligible_;
  const auto per_batch =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(config.max_tgt_tokens / mean_tgt));
  const std::int64_t pool_pairs = config.bucket_pool * per_batch;
  blocks_ = ceil_div(data.size(), kBlockPairs);
  blocks_per_pool_ = std::max<std::int64_t>(1, ceil_div(pool_pairs, kBlockPairs));
  pools_ = ceil_div(blocks_, blocks_per_pool_);
}

bool TokenBatcher::eligible(const preprocess::PairLengths& lengths) const {
  // +1: EOS on the source, BOS/EOS on the target sides.
  return lengths.src + 1 <= config_.max_length && lengths.tgt + 1 <= config_.max_length;
}

BatchPlan TokenBatcher::pool_plan(std::int64_t epoch, std::int64_t pool) const {
  const BlockPermutation blocks(
      static_cast<std::uint64_t>(blocks_),
      splitmix64_finalize(seed_ ^ (static_cast<std::uint64_t>(epoch) * kSplitMix64Gamma)));
  std::vector<Entry> entries;
  const auto last = std::min(blocks_, (pool + 1) * blocks_per_pool_);
  for (auto j = pool * blocks_per_pool_; j < last; ++j) {
    const auto block = static_cast<std::int64_t>(blocks(static_cast<std::uint64_t>(j)));
    const auto end = std::min(data_.size(), (block + 1) * kBlockPairs);
    for (auto i = block * kBlockPairs; i < end; ++i) {
      const auto lengths = data_.lengths(i);
      if (eligible(lengths)) entries.push_back({i, lengths});
    }
  }
  auto rng = pool_rng(seed_, epoch, pool);
  shuffle(entries, rng);
  sort_by_length(entries);
  auto plan = fill_batches(entries, config_);
  shuffle(plan, rng);
  return plan;
}

BatchPlan TokenBatcher::epoch_plan(std::int64_t epoch) const {
  BatchPlan plan;
  for (std::int64_t p = 0; p < pools_; ++p) {
    for (auto& batch : pool_plan(epoch, p)) plan.push_back(std::move(batch));
  }
  return plan;
}

BatchPlan TokenBatcher::sequential_plan() const {
  std::vector<Entry> entries;
  data_.scan_lengths([&](std::int64_t i, const preprocess::PairLengths& lengths) {
    if (eligible(lengths)) entries.push_back({i, lengths});
  });
  sort_by_length(entries);
  return fill_batches(entries, config_);
}

EpochPlan::EpochPlan(const TokenBatcher& batcher, std::int64_t epoch)
    : batcher_(batcher), epoch_(epoch) {}

const BatchPlan& EpochPlan::pool(std::int64_t p) {
  for (const auto& [index, batches] : kept_) {
    if (index == p) return batches;
  }
  batcher_.release_pages();  // the pages of pools planned before
  if (kept_.size() == kKeptPools) kept_.erase(kept_.begin());
  kept_.emplace_back(p, batcher_.pool_plan(epoch_, p));
  return kept_.back().second;
}

const std::vector<std::int64_t>* EpochPlan::batch(std::int64_t b) {
  if (b < 0) return nullptr;
  while (pool_ends_.empty() || pool_ends_.back() <= b) {
    const auto p = static_cast<std::int64_t>(pool_ends_.size());
    if (p == batcher_.pools()) return nullptr;
    const auto size = static_cast<std::int64_t>(pool(p).size());
    pool_ends_.push_back((p == 0 ? 0 : pool_ends_.back()) + size);
  }
  const auto p = static_cast<std::size_t>(
      std::upper_bound(pool_ends_.begin(), pool_ends_.end(), b) - pool_ends_.begin());
  const auto first = p == 0 ? 0 : pool_ends_[p - 1];
  return &pool(static_cast<std::int64_t>(p))[static_cast<std::size_t>(b - first)];
}

Batch TokenBatcher::make_batch(const std::vector<std::int64_t>& indices) const {
  std::vector<preprocess::TokenSpan> sources, targets;
  Batch batch;
  for (const auto i : indices) {
    const auto pair = data_.pair(i);
    sources.push_back(pair.src);
    targets.push_back(pair.tgt);
    batch.src_tokens += static_cast<std::int64_t>(pair.src.size) + 1;
    batch.tgt_tokens += static_cast<std::int64_t>(pair.tgt.size) + 1;
  }
  batch.src = padded_rows(sources, /*eos=*/true);      // [batch, src_len]
  batch.tgt_in = padded_rows(targets, /*eos=*/false);  // [batch, tgt_len]
  batch.tgt_out = padded_rows(targets, /*eos=*/true);  // [batch, tgt_len]
  return batch;
}

}  // namespace nmt::data
