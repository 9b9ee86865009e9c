// The training schedule (when to log, validate, checkpoint and stop, and the run's clock across
// resumes) and the votes the ranks agree on after every update, without training.

#include <chrono>
#include <limits>

#include "test_utils.h"
#include "trainer/config/train_config.h"
#include "trainer/distributed/communicator.h"
#include "trainer/train/schedule.h"
#include "trainer/train/update_agreement.h"

namespace nmt {
namespace {

using Clock = train::Schedule::Clock;
using train::Schedule;
using train::UpdateAgreement;

const Clock::time_point t0 = Clock::time_point{} + std::chrono::hours(1);

TrainConfig train_config() {
  TrainConfig t;
  t.max_steps = 1000;
  t.log_every = 10;
  t.validate_every = 100;
  t.valid_bleu_every = 500;
  t.early_stopping = 2;
  return t;
}

CheckpointConfig checkpoint_config() {
  CheckpointConfig c;
  c.every_steps = 250;
  c.every_minutes = 0;
  return c;
}

UpdateAgreement stop_votes(StopReason reason) {
  UpdateAgreement v;
  v.vote_stop(reason);
  return v;
}

// The votes of the update on which the time budget runs out.
UpdateAgreement out_of_time_votes() {
  UpdateAgreement v;
  v.out_of_time = true;
  return v;
}

TEST(Schedule, LogsEveryLogStepTheLastStepAndAStop) {
  Schedule s(train_config(), checkpoint_config(), true, 1, t0);
  const UpdateAgreement none;
  EXPECT_TRUE(s.log(20, none));
  EXPECT_FALSE(s.log(21, none));
  EXPECT_TRUE(s.log(1000, none)) << "the last step";
  const UpdateAgreement out = out_of_time_votes();
  EXPECT_TRUE(s.log(21, out)) << "the time budget's last step";
  EXPECT_TRUE(s.log(21, stop_votes(StopReason::kPreempted))) << "a stop";
}

TEST(Schedule, ValidatesOnItsStepsAndTheLastButBleuNotOnAStop) {
  Schedule s(train_config(), checkpoint_config(), true, 1, t0);
  const UpdateAgreement none;
  EXPECT_TRUE(s.validate(300, none));
  EXPECT_FALSE(s.validate(301, none));
  EXPECT_TRUE(s.validate(1000, none));
  const auto stop = stop_votes(StopReason::kInterrupted);
  EXPECT_TRUE(s.validate(300, stop)) << "perplexity feeds the best checkpoint: also on a stop";
  EXPECT_TRUE(s.validate_bleu(500, none));
  EXPECT_FALSE(s.validate_bleu(300, none));
  EXPECT_FALSE(s.validate_bleu(500, stop)) << "BLEU is a metric only: not on a stop";
  const UpdateAgreement out = out_of_time_votes();
  EXPECT_TRUE(s.validate_bleu(333, out)) << "the time budget's last step";

  Schedule without(train_config(), checkpoint_config(), false, 1, t0);
  EXPECT_FALSE(without.validate(300, none)) << "no validation split";
  EXPECT_FALSE(without.validate_bleu(500, none));
  TrainConfig never = train_config();
  never.validate_every = 0;
  EXPECT_FALSE(Schedule(never, checkpoint_config(), true, 1, t0).validate(1000, none));
}

TEST(Schedule, ChecksByStepsAtTheEndAndWhenTheRunEndsEarly) {
  Schedule s(train_config(), checkpoint_config(), true, 1, t0);
  const UpdateAgreement none;
  EXPECT_TRUE(s.checkpoint(500, none, t0));
  EXPECT_FALSE(s.checkpoint(501, none, t0));
  EXPECT_TRUE(s.checkpoint(1000, none, t0));
  EXPECT_TRUE(s.checkpoint(501, stop_votes(StopReason::kPreempted), t0));
  EXPECT_TRUE(s.checkpoint(501, stop_votes(StopReason::kUnrecorded), t0));
  const UpdateAgreement out = out_of_time_votes();
  EXPECT_TRUE(s.checkpoint(501, out, t0));
  train::ValidationRecord record{std::numeric_limits<double>::infinity(), 0};
  s.record_validation(record, 2.0);
  s.record_validation(record, 2.0);
  EXPECT_FALSE(s.checkpoint(501, none, t0)) << "one validation without a new best";
  s.record_validation(record, 2.0);
  EXPECT_TRUE(s.checkpoint(501, none, t0)) << "stopping early";
}

TEST(Schedule, CheckpointMinutesAreTheClockWithOneRankAndTheVoteWithSeveral) {
  auto c = checkpoint_config();
  c.every_minutes = 10;
  Schedule one(train_config(), c, true, 1, t0);
  const UpdateAgreement none;
  EXPECT_FALSE(one.checkpoint(501, none, t0 + std::chrono::minutes(9)));
  EXPECT_TRUE(one.checkpoint_time_is_up(t0 + std::chrono::minutes(10)));
  EXPECT_TRUE(one.checkpoint(501, none, t0 + std::chrono::minutes(10)));
  one.saved(t0 + std::chrono::minutes(10));
  EXPECT_FALSE(one.checkpoint(501, none, t0 + std::chrono::minutes(19))) << "from the last save";

  Schedule several(train_config(), c, true, 4, t0);
  EXPECT_FALSE(several.checkpoint(501, none, t0 + std::chrono::minutes(30)))
      << "rank 0's vote decides, not this rank's clock";
  UpdateAgreement by_time;
  by_time.checkpoint_by_time = true;
  EXPECT_TRUE(several.checkpoint(501, by_time, t0));
}

TEST(Schedule, TheClockCountsEarlierProcessesTime) {
  auto t = train_config();
  t.max_minutes = 10;
  Schedule s(t, checkpoint_config(), true, 1, t0);
  s.start(120.0, t0);
  EXPECT_DOUBLE_EQ(s.elapsed_seconds(t0 + std::chrono::seconds(60)), 180.0);
  EXPECT_FALSE(s.out_of_time(t0 + std::chrono::seconds(479)));
  EXPECT_TRUE(s.out_of_time(t0 + std::chrono::seconds(480)));
  EXPECT_DOUBLE_EQ(s.done_fraction(100, t0), 0.2) << "the budget runs out before the steps";
  EXPECT_DOUBLE_EQ(s.done_fraction(500, t0), 0.5) << "the steps run out before the budget";
  EXPECT_DOUBLE_EQ(s.done_fraction(0, t0 + std::chrono::hours(1)), 1.0);
  EXPECT_TRUE(s.running(999));
  EXPECT_FALSE(s.running(1000));

  auto no_budget = train_config();
  Schedule steps_only(no_budget, checkpoint_config(), true, 1, t0);
  steps_only.start(1e9, t0);
  EXPECT_DOUBLE_EQ(steps_only.done_fraction(250, t0), 0.25);
  EXPECT_FALSE(steps_only.out_of_time(t0 + std::chrono::hours(1000)));
  EXPECT_TRUE(steps_only.running(250));
}

TEST(Schedule, ARunWhoseBudgetWasSpentBeforeEndsAtOnce) {
  auto t = train_config();
  t.max_minutes = 10;
  Schedule s(t, checkpoint_config(), true, 1, t0);
  s.start(600.0, t0);
  EXPECT_TRUE(s.ending().out_of_time);
  EXPECT_FALSE(s.running(0));
}

TEST(Schedule, EndsOnTheTimeBudgetAStopOrAnEarlyStop) {
  const UpdateAgreement none;
  {
    Schedule s(train_config(), checkpoint_config(), true, 1, t0);
    s.start(0.0, t0);
    EXPECT_EQ(s.conclude(500, none).stopped, StopReason::kNone);
    EXPECT_TRUE(s.running(500));
    EXPECT_EQ(s.conclude(500, stop_votes(StopReason::kPreempted)).stopped, StopReason::kPreempted);
    EXPECT_FALSE(s.running(500));
  }
  {
    Schedule s(train_config(), checkpoint_config(), true, 1, t0);
    const auto& ending = s.conclude(1000, stop_votes(StopReason::kInterrupted));
    EXPECT_EQ(ending.stopped, StopReason::kNone) << "a stop with the last update: finished";
  }
  {
    Schedule s(train_config(), checkpoint_config(), true, 1, t0);
    UpdateAgreement out = stop_votes(StopReason::kPreempted);
    out.out_of_time = true;
    const auto& ending = s.conclude(500, out);
    EXPECT_TRUE(ending.out_of_time);
    EXPECT_EQ(ending.stopped, StopReason::kNone) << "the budget's end is a finished run";
    EXPECT_FALSE(s.running(500));
  }
  {
    Schedule s(train_config(), checkpoint_config(), true, 1, t0);
    train::ValidationRecord record{std::numeric_limits<double>::infinity(), 0};
    EXPECT_TRUE(s.record_validation(record, 3.0));
    EXPECT_FALSE(s.record_validation(record, 3.5));
    EXPECT_FALSE(s.ending().early_stopped);
    EXPECT_FALSE(s.record_validation(record, 3.0));
    EXPECT_TRUE(s.ending().early_stopped);
    EXPECT_EQ(s.conclude(500, stop_votes(StopReason::kPreempted)).stopped, StopReason::kNone)
        << "an early stop is a finished run";
    EXPECT_FALSE(s.running(500));
  }
}

TEST(UpdateAgreement, TravelAsOneVectorAndAgreeOnTheStrongestStop) {
  UpdateAgreement v;
  v.tgt_tokens = 1234;
  v.src_tokens = 987;
  v.checkpoint_by_time = true;
  v.out_of_time = true;
  v.done_fraction = 0.25;
  v.vote_stop(StopReason::kInterrupted);
  const auto back = UpdateAgreement::from_vector(v.to_vector());
  EXPECT_EQ(back.tgt_tokens, 1234);
  EXPECT_EQ(back.src_tokens, 987);
  EXPECT_TRUE(back.checkpoint_by_time);
  EXPECT_TRUE(back.out_of_time);
  EXPECT_DOUBLE_EQ(back.done_fraction, 0.25);
  EXPECT_EQ(back.stop(), StopReason::kInterrupted);

  // Summed over ranks: one rank preempted, one interrupted, one unable to record.
  auto sums = stop_votes(StopReason::kPreempted).to_vector();
  const auto interrupted = stop_votes(StopReason::kInterrupted).to_vector();
  for (std::size_t i = 0; i < sums.size(); ++i) sums[i] += interrupted[i];
  EXPECT_EQ(UpdateAgreement::from_vector(sums).stop(), StopReason::kInterrupted)
      << "a person's interrupt wins over preemption";
  const auto unrecorded = stop_votes(StopReason::kUnrecorded).to_vector();
  for (std::size_t i = 0; i < sums.size(); ++i) sums[i] += unrecorded[i];
  EXPECT_EQ(UpdateAgreement::from_vector(sums).stop(), StopReason::kUnrecorded);
  EXPECT_EQ(UpdateAgreement().stop(), StopReason::kNone);
  EXPECT_THROW(UpdateAgreement::from_vector({1.0, 2.0}), std::invalid_argument);

  const auto agreed = train::agree(v, distributed::Communicator::self());
  EXPECT_EQ(agreed.tgt_tokens, 1234);
  EXPECT_DOUBLE_EQ(agreed.done_fraction, 0.25) << "rank 0's done fraction";
}

}  // namespace
}  // namespace nmt
