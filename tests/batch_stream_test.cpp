// The stream of micro-batches a rank trains on: each update sharded by rank, prefetching, resume.

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "test_utils.h"
#include "tiny_shard_dataset.h"
#include "trainer/data/batching.h"
#include "trainer/train/batch_stream.h"

namespace nmt {
namespace {

using testing::TempDir;
using testing::tiny_dataset;
using testing::token_budget;

// Sharding by global update: an update takes the plan's next update_batches batches whatever the
// number of ranks, rank r of N the r-th run of update_batches / N of them; an epoch's tail that
// cannot fill an update is left for the next epoch. prefetch() never moves the position and next()
// hands out the same batches with or without it; seek() resumes at a stored position.
TEST(BatchStream, ShardsEachUpdateByRankPrefetchesWithoutMovingAndResumes) {
  TempDir dir;
  const auto dataset = tiny_dataset(dir, 200);
  DataConfig config = token_budget(60);
  data::TokenBatcher batcher(dataset, config, 11);
  const auto plan0 = batcher.epoch_plan(0);
  const auto plan1 = batcher.epoch_plan(1);
  const auto cpu = c10::Device(c10::kCPU);
  constexpr std::int64_t kUpdate = 6;
  const auto updates_per_epoch = static_cast<std::int64_t>(plan0.size()) / kUpdate;
  ASSERT_GE(updates_per_epoch, 2);

  train::BatchStream one(batcher, 0, 1, kUpdate, cpu);  // 1 rank: all 6 batches
  std::vector<train::BatchStream> ranks;                // 3 ranks: 2 batches each
  for (int r = 0; r < 3; ++r) ranks.emplace_back(batcher, r, 3, kUpdate, cpu);
  train::BatchStream prefetching(batcher, 1, 3, kUpdate, cpu);
  EXPECT_EQ(ranks[1].batches_per_rank(), 2);
  for (std::int64_t k = 0; k < updates_per_epoch + 2; ++k) {
    const bool first_epoch = k < updates_per_epoch;
    const auto& plan = first_epoch ? plan0 : plan1;
    const auto base = (first_epoch ? k : k - updates_per_epoch) * kUpdate;
    const auto expected = [&](std::int64_t i) {
      return batcher.make_batch(plan[static_cast<std::size_t>(base + i)]).src;
    };
    for (std::int64_t i = 0; i < kUpdate; ++i) {
      EXPECT_TRUE(at::equal(one.next().src, expected(i))) << k << "/" << i;
      EXPECT_EQ(one.last_index_in_update(), i);
    }
    for (int r = 0; r < 3; ++r) {
      for (std::int64_t a = 0; a < 2; ++a) {
        EXPECT_TRUE(at::equal(ranks[r].next().src, expected(2 * r + a))) << k << "/" << r;
        EXPECT_EQ(ranks[r].last_index_in_update(), 2 * r + a);
      }
      EXPECT_TRUE(ranks[r].position() == one.position()) << "the same updates on 1 and 3 ranks";
    }
    for (std::int64_t a = 0; a < 2; ++a) {
      prefetching.prefetch();
      const auto before = prefetching.position();
      prefetching.prefetch();
      EXPECT_TRUE(prefetching.position() == before);
      EXPECT_TRUE(at::equal(prefetching.next().src, expected(2 + a))) << k;
    }
  }
  EXPECT_EQ(one.position().epoch, 1) << "the tail of epoch 0 was left for epoch 1";
  EXPECT_EQ(one.position().batch_in_epoch, 2 * kUpdate);

  train::BatchStream resumed(batcher, 0, 1, kUpdate, cpu);  // 3 ranks' position, on 1 rank
  resumed.seek(ranks[2].position());
  const auto next_expected = one.next();
  EXPECT_TRUE(at::equal(resumed.next().src, next_expected.src));
  EXPECT_THROW(train::BatchStream(batcher, 0, 4, kUpdate, cpu), std::invalid_argument)
      << "6 batches cannot be shared by 4 ranks";
}

}  // namespace
}  // namespace nmt
