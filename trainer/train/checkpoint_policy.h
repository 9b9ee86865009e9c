#pragma once
// When training writes a step checkpoint, and when it stops early: the run's checkpoint and
// early-stopping policies, apart from the loop that applies them. No LibTorch, no I/O.

#include <chrono>
#include <cstdint>

#include "trainer/config/train_config.h"

namespace nmt::train {

// A step checkpoint is due every `checkpoint.every_steps` updates, when `checkpoint.every_minutes`
// have passed since the last save (with several ranks rank 0's clock decides and the verdict
// travels in the update's collective, so all ranks agree), at the last step, and when training
// stops early.
class CheckpointPolicy {
 public:
  using Clock = std::chrono::steady_clock;
  CheckpointPolicy(const CheckpointConfig& config, std::int64_t max_steps,
                   Clock::time_point start = Clock::now());

  // Whether the minutes have run out at `now` (evaluated by one rank, shared with the others).
  bool time_is_up(Clock::time_point now = Clock::now()) const;
  bool due(std::int64_t step, bool time_is_up, bool stopping_early) const;
  // A checkpoint (step or best) was written at `now`: the minutes count from there.
  void saved(Clock::time_point now = Clock::now()) { last_save_ = now; }

 private:
  CheckpointConfig config_;
  std::int64_t max_steps_;
  Clock::time_point last_save_;
};

// Early stopping on the validation loss: `patience` validations in a row without a new best stop
// training (0: never). The counters live in the checkpointed training state, so a resumed run
// keeps its patience.
struct ValidationRecord {
  double best_nll;
  std::int64_t without_improvement;
};
// Records `nll`; returns whether it is a new best.
bool record_validation(ValidationRecord& record, double nll);
bool should_stop_early(const ValidationRecord& record, std::int64_t patience);

}  // namespace nmt::train
