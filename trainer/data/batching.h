#pragma once
// Token-based batches (paper section 5.1: "sentence pairs were batched together by approximate
// sequence length; each training batch contained ... approximately 25000 source tokens and 25000
// target tokens"). Each epoch shuffles the pairs from (seed, epoch), sorts pools of them by
// length so batches hold similar lengths and little padding, fills batches up to the padded
// token budgets, and shuffles the batch order. The plan is a pure function of (seed, epoch), so
// resuming at (epoch, batch) reproduces exactly the batches an uninterrupted run would see.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "preprocess/shard_format.h"
#include "trainer/train_config.h"

namespace nmt::data {

struct Batch {
  at::Tensor src;               // [batch, src_len] int64: tokens + EOS, padded with 0
  at::Tensor tgt_in;            // [batch, tgt_len] int64: BOS + tokens (decoder input)
  at::Tensor tgt_out;           // [batch, tgt_len] int64: tokens + EOS (what the decoder predicts)
  std::int64_t src_tokens = 0;  // non-pad
  std::int64_t tgt_tokens = 0;  // non-pad, = positions the loss counts
  std::int64_t rows() const { return src.size(0); }
};

using BatchPlan = std::vector<std::vector<std::int64_t>>;  // pair indices per batch

class TokenBatcher {
 public:
  TokenBatcher(const preprocess::ShardDataset& data, const DataConfig& config, std::uint64_t seed);

  // Training batches of `epoch`, in order. Deterministic in (seed, epoch).
  BatchPlan epoch_plan(std::int64_t epoch) const;
  // Every eligible pair once, sorted by length, not shuffled: for validation.
  BatchPlan sequential_plan() const;
  Batch make_batch(const std::vector<std::int64_t>& indices) const;

  std::int64_t eligible_pairs() const { return static_cast<std::int64_t>(eligible_.size()); }
  std::int64_t skipped_too_long() const { return skipped_; }

 private:
  BatchPlan fill_batches(const std::vector<std::int64_t>& sorted) const;
  void sort_by_length(std::vector<std::int64_t>::iterator begin,
                      std::vector<std::int64_t>::iterator end) const;

  const preprocess::ShardDataset& data_;
  DataConfig config_;
  std::uint64_t seed_;
  std::vector<std::int64_t> eligible_;
  std::int64_t skipped_ = 0;
  std::int64_t pool_pairs_ = 1;
};

}  // namespace nmt::data
