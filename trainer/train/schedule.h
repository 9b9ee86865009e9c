#pragma once
// When training logs, validates, writes a checkpoint and stops: the run's schedule, asked by the
// training loop after every update with what the ranks agreed on (update_agreement.h), and the
// run's clock (training time across resumes, against train.max_minutes). The loop does the work;
// this decides when. No LibTorch, no I/O.

#include <chrono>
#include <cstdint>

#include "common/stop_signals.h"
#include "trainer/config/train_config.h"
#include "trainer/train/checkpoint_policy.h"
#include "trainer/train/update_agreement.h"

namespace nmt::train {

// Why the run ended before train.max_steps (all false and kNone: it ran to max_steps, or runs).
struct Ending {
  bool early_stopped = false;              // train.early_stopping's patience ran out
  bool out_of_time = false;                // train.max_minutes spent: finished, as at max_steps
  StopReason stopped = StopReason::kNone;  // a stop signal or a sink that cannot record
};

class Schedule {
 public:
  using Clock = std::chrono::steady_clock;
  // `validation`: whether the run has a validation split; `ranks`: with one, the checkpoint's
  // minutes are read at the checkpoint, with several they are rank 0's vote. The checkpoint's
  // minutes count from `now`.
  Schedule(const TrainConfig& train, const CheckpointConfig& checkpoint, bool validation, int ranks,
           Clock::time_point now = Clock::now());

  // The loop starts at `now`, after `elapsed_before` seconds of training in earlier processes
  // (the resumed checkpoint's). A run whose time budget was spent before ends at once.
  void start(double elapsed_before, Clock::time_point now = Clock::now());
  // Whether the loop takes another update after `step` updates.
  bool running(std::int64_t step) const;
  const Ending& ending() const { return ending_; }

  // Training seconds of the run so far, earlier processes' included.
  double elapsed_seconds(Clock::time_point now = Clock::now()) const;
  // How much of the run is done after `step` updates: of its updates, or of its time budget when
  // that ends it sooner (the progress line's ETA and the learning rate's cool-down).
  double done_fraction(std::int64_t step, Clock::time_point now = Clock::now()) const;
  // Votes (rank 0's clock): whether train.max_minutes and checkpoint.every_minutes are spent.
  bool out_of_time(Clock::time_point now = Clock::now()) const;
  bool checkpoint_time_is_up(Clock::time_point now = Clock::now()) const;

  // After update `step`, with the ranks' agreed `votes`. The last update of the run (max_steps or
  // the time budget) is always logged, validated and checkpointed; a stop signal's too, but for
  // BLEU (a metric only, and slow): validation perplexity feeds the best checkpoint and early
  // stopping, which a resumed run must continue exactly.
  bool log(std::int64_t step, const UpdateAgreement& votes) const;
  bool validate(std::int64_t step, const UpdateAgreement& votes) const;
  bool validate_bleu(std::int64_t step, const UpdateAgreement& votes) const;
  // Records a validation's `nll` in `record` (the training state's), ending the run when the
  // patience runs out. Returns whether it is a new best.
  bool record_validation(ValidationRecord& record, double nll);
  // A step checkpoint: by steps, by minutes, at the last step and whenever the run ends early.
  bool checkpoint(std::int64_t step, const UpdateAgreement& votes,
                  Clock::time_point now = Clock::now()) const;
  // A checkpoint (step or best) was written at `now`: the checkpoint's minutes count from there.
  void saved(Clock::time_point now = Clock::now()) { checkpoints_.saved(now); }
  // Ends the run after update `step` when the votes say so (the time budget, a stop); a stop that
  // comes with the last update or an early stop changes nothing: the run finished.
  const Ending& conclude(std::int64_t step, const UpdateAgreement& votes);

 private:
  bool last(std::int64_t step, const UpdateAgreement& votes) const;
  bool due(std::int64_t every, std::int64_t step, const UpdateAgreement& votes) const;

  TrainConfig train_;
  CheckpointPolicy checkpoints_;
  bool validation_;
  int ranks_;
  Clock::time_point run_start_;
  double elapsed_before_ = 0.0;
  Ending ending_;
};

}  // namespace nmt::train
