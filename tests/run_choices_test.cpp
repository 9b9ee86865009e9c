// The settings a run resolves at start: the update size and the seed of each micro-batch.

#include <cstdint>
#include <set>

#include "test_utils.h"
#include "trainer/config/train_config.h"
#include "trainer/train/batch_stream.h"
#include "trainer/train/run_choices.h"

namespace nmt {
namespace {

// The update size: the config's when set, else the resumed checkpoint's, else accumulation x
// ranks; accumulation becomes this rank's share. And the seed of a micro-batch depends on the
// update and the index in it, nothing else.
TEST(RunSettings, UpdateSizeComesFromTheConfigTheCheckpointOrAccumulation) {
  const auto self = distributed::Communicator::self();
  RunConfig fresh;
  fresh.train.accumulation = 3;
  train::choose_update_batches(fresh, nullptr, self);
  EXPECT_EQ(fresh.train.update_batches, 3);
  EXPECT_EQ(fresh.train.accumulation, 3);

  RunConfig stored;
  stored.train.update_batches = 4;  // e.g. 2 ranks x 2
  RunConfig resumed;                // asks for nothing: keeps the checkpoint's
  train::choose_update_batches(resumed, &stored, self);
  EXPECT_EQ(resumed.train.update_batches, 4);
  EXPECT_EQ(resumed.train.accumulation, 4) << "one rank accumulates all 4";

  RunConfig asked;
  asked.train.update_batches = 6;
  train::choose_update_batches(asked, &stored, self);
  EXPECT_EQ(asked.train.update_batches, 6) << "an explicit setting wins";

  EXPECT_EQ(train::micro_batch_seed(1, 10, 0), train::micro_batch_seed(1, 10, 0));
  std::set<std::uint64_t> seeds;
  for (std::int64_t step = 1; step <= 20; ++step) {
    for (std::int64_t i = 0; i < 8; ++i) seeds.insert(train::micro_batch_seed(1, step, i));
  }
  EXPECT_EQ(seeds.size(), 160u) << "every (step, index) its own seed";
  EXPECT_NE(train::micro_batch_seed(1, 10, 0), train::micro_batch_seed(2, 10, 0));
}

}  // namespace
}  // namespace nmt
