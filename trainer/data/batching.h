#pragma once
// Token-based batches (paper section 5.1: "sentence pairs were batched together by approximate
// sequence length; each training batch contained ... approximately 25000 source tokens and 25000
// target tokens"), planned in bounded memory over a split of any size, as fairseq's and Marian's
// maxi-batches are.
//
// An epoch's plan is a sequence of pools. The split is cut into blocks of kBlockPairs consecutive
// pairs; each epoch visits the blocks in a pseudo-random order of (seed, epoch) computed one block
// at a time (block_permutation.h), and each pool takes the next data.bucket_pool batches' worth of
// blocks: its pairs are shuffled, sorted by length so that batches hold similar lengths and little
// padding, cut into batches up to the padded token budgets, and the pool's batches are shuffled.
// Memory is a few pools (about 100 batches of pair indices each), not the split; a pool's pairs are
// read in runs of kBlockPairs neighbours, so the pages read stay few and sequential. The plan is a
// pure function of (seed, epoch), so resuming at (epoch, batch) reproduces exactly the batches an
// uninterrupted run would see, on any number of ranks.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "preprocess/shard_format.h"
#include "trainer/config/train_config.h"

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

inline constexpr std::int64_t kBlockPairs = 64;

class TokenBatcher {
 public:
  // Reads every pair's lengths once (offsets only, shard by shard) to count the pairs within
  // data.max_length and the mean target length that sizes the pools.
  TokenBatcher(const preprocess::ShardDataset& data, const DataConfig& config, std::uint64_t seed);

  std::int64_t pools() const { return pools_; }
  // The batches of one pool of `epoch`, in training order. Deterministic in (seed, epoch, pool).
  BatchPlan pool_plan(std::int64_t epoch, std::int64_t pool) const;
  // A whole epoch's batches (pool after pool): for small splits and tests.
  BatchPlan epoch_plan(std::int64_t epoch) const;
  // Every eligible pair once, sorted by length, not shuffled: for validation (memory: the split's
  // pair indices).
  BatchPlan sequential_plan() const;
  Batch make_batch(const std::vector<std::int64_t>& indices) const;
  // Drops the pages of the shards read so far (see ShardDataset::release_pages).
  void release_pages() const { data_.release_pages(); }

  std::int64_t eligible_pairs() const { return eligible_; }
  std::int64_t skipped_too_long() const { return skipped_; }

 private:
  bool eligible(const preprocess::PairLengths& lengths) const;

  const preprocess::ShardDataset& data_;
  DataConfig config_;
  std::uint64_t seed_;
  std::int64_t eligible_ = 0;
  std::int64_t skipped_ = 0;
  std::int64_t blocks_ = 0;
  std::int64_t blocks_per_pool_ = 1;
  std::int64_t pools_ = 0;
};

// One epoch's batches, planned pool by pool as they are reached: it keeps the batch count of each
// pool planned so far and the batches of at most kKeptPools pools. Reading in increasing order (as
// training does) plans each pool once; seeking back re-plans the pool it lands in.
class EpochPlan {
 public:
  EpochPlan(const TokenBatcher& batcher, std::int64_t epoch);
  std::int64_t epoch() const { return epoch_; }
  // Batch `b` of the epoch, or nullptr when the epoch has no more than b batches. Valid until the
  // next call.
  const std::vector<std::int64_t>* batch(std::int64_t b);

 private:
  static constexpr std::size_t kKeptPools = 2;
  const BatchPlan& pool(std::int64_t p);

  const TokenBatcher& batcher_;
  std::int64_t epoch_;
  std::vector<std::int64_t> pool_ends_;                   // pool_ends_[p]: batches in pools 0..p
  std::vector<std::pair<std::int64_t, BatchPlan>> kept_;  // (pool, its batches), newest last
};

}  // namespace nmt::data
