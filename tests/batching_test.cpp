// Token-budget batching (paper section 5.1): budgets, coverage and determinism of an epoch's plan,
// the batch tensors, and the plan streamed pool by pool.

#include <cstdint>
#include <set>
#include <vector>

#include "preprocess/vocabulary.h"
#include "test_utils.h"
#include "tiny_shard_dataset.h"
#include "trainer/data/batching.h"
#include "trainer/data/padded_batch.h"

namespace nmt {
namespace {

using testing::TempDir;
using testing::tiny_dataset;
using testing::token_budget;

TEST(Batching, BudgetsCoverageDeterminismAndTensors) {
  TempDir dir;
  const auto dataset = tiny_dataset(dir, 500);
  DataConfig config = token_budget(40);
  config.max_length = 9;  // drops pairs whose source has 9 tokens (+EOS = 10)
  config.bucket_pool = 4;
  data::TokenBatcher batcher(dataset, config, 7);
  EXPECT_EQ(batcher.skipped_too_long(), 500 / 9 + (500 % 9 > 8 ? 1 : 0));
  const auto plan = batcher.epoch_plan(0);
  std::set<std::int64_t> seen;
  for (const auto& batch : plan) {
    const auto b = batcher.make_batch(batch);
    EXPECT_LE(b.src.numel(), 40);  // padded budget
    EXPECT_LE(b.tgt_in.numel(), 40);
    for (auto i : batch) EXPECT_TRUE(seen.insert(i).second) << "pair twice in an epoch";
  }
  EXPECT_EQ(static_cast<std::int64_t>(seen.size()), batcher.eligible_pairs());
  EXPECT_EQ(batcher.epoch_plan(0), plan);  // same (seed, epoch): same plan
  EXPECT_NE(batcher.epoch_plan(1), plan);  // a new epoch reshuffles
  EXPECT_NE(data::TokenBatcher(dataset, config, 8).epoch_plan(0), plan);

  const auto b = batcher.make_batch({3});  // source 4 tokens of id 7, target 4 tokens of id 8
  EXPECT_EQ(b.src.sizes(), (std::vector<std::int64_t>{1, 5}));
  EXPECT_EQ(b.src[0][4].item<std::int64_t>(), preprocess::kEosId);
  EXPECT_EQ(b.tgt_in[0][0].item<std::int64_t>(), preprocess::kBosId);
  EXPECT_EQ(b.tgt_in[0][1].item<std::int64_t>(), 8);
  EXPECT_EQ(b.tgt_out[0][3].item<std::int64_t>(), 8);
  EXPECT_EQ(b.tgt_out[0][4].item<std::int64_t>(), preprocess::kEosId);
  EXPECT_EQ(b.tgt_tokens, 5);
  const auto padded = batcher.make_batch({0, 3});  // lengths 1 and 4: row 0 padded with 0
  EXPECT_EQ(padded.src[0][2].item<std::int64_t>(), preprocess::kPadId);
  EXPECT_EQ(padded.src_tokens, 2 + 5);
}

// An epoch is planned pool by pool: EpochPlan hands out exactly epoch_plan()'s batches in order,
// nothing past the end, the same batch again after seeking back, and each pool draws its pairs
// from blocks spread over the split.
TEST(Batching, EpochPlanStreamsPoolsAndMixesBlocks) {
  TempDir dir;
  const auto dataset = tiny_dataset(dir, 3000);
  DataConfig config = token_budget(60);
  config.bucket_pool = 8;  // ~8 batches of ~12 pairs: pools of 2 blocks of 64 pairs
  data::TokenBatcher batcher(dataset, config, 5);
  ASSERT_GT(batcher.pools(), 10);
  const auto whole = batcher.epoch_plan(3);
  data::EpochPlan plan(batcher, 3);
  for (std::size_t b = 0; b < whole.size(); ++b) {
    const auto* batch = plan.batch(static_cast<std::int64_t>(b));
    ASSERT_NE(batch, nullptr) << b;
    EXPECT_EQ(*batch, whole[b]) << b;
  }
  EXPECT_EQ(plan.batch(static_cast<std::int64_t>(whole.size())), nullptr);
  EXPECT_EQ(*plan.batch(1), whole[1]);  // back to the first pool: planned again, the same
  EXPECT_EQ(*data::EpochPlan(batcher, 3).batch(static_cast<std::int64_t>(whole.size()) - 1),
            whole.back());

  std::set<std::int64_t> blocks, first_pool_blocks;
  for (const auto& batch : batcher.pool_plan(3, 0)) {
    for (const auto i : batch) first_pool_blocks.insert(i / data::kBlockPairs);
  }
  for (const auto& batch : batcher.pool_plan(3, 1)) {
    for (const auto i : batch) blocks.insert(i / data::kBlockPairs);
  }
  EXPECT_GE(first_pool_blocks.size(), 2u);
  for (const auto block : blocks) EXPECT_EQ(first_pool_blocks.count(block), 0u);
  // Not the split's order: the first pool's blocks are not the first blocks.
  EXPECT_NE(first_pool_blocks, (std::set<std::int64_t>{0, 1}));
  EXPECT_NE(batcher.pool_plan(4, 0), batcher.pool_plan(3, 0));
}

// The padded-size rule training and translation share: a batch of length-sorted sequences takes
// the next one while rows x (longest + 1) stays within the budget, and a sequence longer than the
// budget still makes a batch of one.
TEST(PaddedBatch, BudgetCountsRowsTimesTheLongestWithItsEos) {
  data::PaddedBudget budget(12);
  EXPECT_TRUE(budget.fits(20));  // alone, whatever its length
  budget.add(2);                 // 1 x 3
  EXPECT_TRUE(budget.fits(3));   // 2 x 4 = 8
  budget.add(3);
  EXPECT_TRUE(budget.fits(3));   // 3 x 4 = 12
  EXPECT_FALSE(budget.fits(4));  // 3 x 5 = 15
  budget.add(3);
  EXPECT_FALSE(budget.fits(3));  // 4 x 4 = 16
  budget.clear();
  EXPECT_TRUE(budget.fits(11));  // 1 x 12 after clear()
  // Lengths 2, 3, 3 fill 12; 3 more starts a batch; 20 goes alone.
  EXPECT_EQ(data::batch_ends({2, 3, 3, 3, 20}, 12), (std::vector<std::size_t>{3, 4, 5}));
  EXPECT_TRUE(data::batch_ends({}, 12).empty());

  const std::vector<std::vector<std::int64_t>> rows = {{5, 6}, {}, {7, 8, 9}};
  const auto with_eos = data::padded_rows(rows, /*eos=*/true);  // [3, 4]
  const auto with_bos = data::padded_rows(rows, /*eos=*/false);
  const std::int64_t E = preprocess::kEosId, B = preprocess::kBosId;
  EXPECT_EQ(with_eos.sizes(), (std::vector<std::int64_t>{3, 4}));
  EXPECT_EQ(std::vector<std::int64_t>(with_eos.data_ptr<std::int64_t>(),
                                      with_eos.data_ptr<std::int64_t>() + 12),
            (std::vector<std::int64_t>{5, 6, E, 0, E, 0, 0, 0, 7, 8, 9, E}));
  EXPECT_EQ(std::vector<std::int64_t>(with_bos.data_ptr<std::int64_t>(),
                                      with_bos.data_ptr<std::int64_t>() + 12),
            (std::vector<std::int64_t>{B, 5, 6, 0, B, 0, 0, 0, B, 7, 8, 9}));
}

}  // namespace
}  // namespace nmt
