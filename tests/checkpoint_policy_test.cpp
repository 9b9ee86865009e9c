// When a checkpoint is due (steps, minutes, the last step, an early stop) and early stopping on
// validation.

#include <chrono>
#include <limits>

#include "test_utils.h"
#include "trainer/config/train_config.h"
#include "trainer/train/checkpoint_policy.h"

namespace nmt {
namespace {

TEST(CheckpointPolicy, DueByStepsMinutesAtTheLastStepAndOnEarlyStop) {
  using Clock = train::CheckpointPolicy::Clock;
  CheckpointConfig c;
  c.every_steps = 100;
  c.every_minutes = 10;
  const auto t0 = Clock::time_point{} + std::chrono::hours(1);
  train::CheckpointPolicy policy(c, 1050, t0);
  EXPECT_TRUE(policy.due(200, false, false));
  EXPECT_FALSE(policy.due(201, false, false));
  EXPECT_TRUE(policy.due(201, true, false)) << "the minutes ran out";
  EXPECT_TRUE(policy.due(1050, false, false)) << "the last step";
  EXPECT_TRUE(policy.due(777, false, true)) << "stopping early";
  EXPECT_FALSE(policy.time_is_up(t0 + std::chrono::minutes(9)));
  EXPECT_TRUE(policy.time_is_up(t0 + std::chrono::minutes(10)));
  policy.saved(t0 + std::chrono::minutes(10));
  EXPECT_FALSE(policy.time_is_up(t0 + std::chrono::minutes(19))) << "counted from the last save";
  c.every_minutes = 0;
  EXPECT_FALSE(train::CheckpointPolicy(c, 10, t0).time_is_up(t0 + std::chrono::hours(100)));
}

TEST(EarlyStopping, StopsAfterPatienceValidationsWithoutANewBest) {
  train::ValidationRecord record{std::numeric_limits<double>::infinity(), 0};
  EXPECT_TRUE(train::record_validation(record, 2.0));
  EXPECT_FALSE(train::record_validation(record, 2.5));
  EXPECT_FALSE(train::should_stop_early(record, 2));
  EXPECT_FALSE(train::record_validation(record, 2.0)) << "equal is no improvement";
  EXPECT_TRUE(train::should_stop_early(record, 2));
  EXPECT_FALSE(train::should_stop_early(record, 0)) << "0: never";
  EXPECT_TRUE(train::record_validation(record, 1.5));
  EXPECT_EQ(record.without_improvement, 0);
  EXPECT_EQ(record.best_nll, 1.5);
}

}  // namespace
}  // namespace nmt
