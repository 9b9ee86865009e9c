#pragma once
// What the training loop tells the tools around it, as one interface the Trainer calls at the
// run's start, after each checkpoint, and at its end or failure (nmt-train's tracked run is one:
// tracking/tracked_training.h). No LibTorch: the tracking library implements it without the
// trainer's.

#include <cstdint>
#include <map>
#include <string>

#include "common/stop_signals.h"
#include "trainer/config/train_config.h"

namespace nmt::train {

struct TrainResult {
  std::int64_t steps = 0;               // the run's step count at the end
  std::int64_t steps_this_process = 0;  // of them, the ones this process trained (after a resume)
  std::int64_t skipped_updates = 0;     // of those, updates skipped for non-finite gradients
  double best_valid_nll = 0.0;          // per target token
  double last_train_loss = 0.0;         // label-smoothed, per target token: the mean over the
                                        // last log window (the last step is always logged)
  double seconds = 0.0;                 // training time of this process
  double allreduce_fraction = 0.0;      // of step time spent waiting on gradient all-reduces
  std::int64_t parameters = 0;
  bool early_stopped = false;
  bool out_of_time = false;  // train.max_minutes ended it (a finished run, as at max_steps)
  // A stop signal, or a sink that cannot record (kUnrecorded), ended it early, after a checkpoint.
  StopReason stopped = StopReason::kNone;
};

// The run as set up, before its first update.
struct RunStart {
  // Resolved: precision and update_batches decided, as config.yaml holds it.
  const RunConfig& config;
  // Why the run trains in config.train.precision (auto's choice on this device, the
  // checkpoint's, or the config's).
  std::string precision_reason;
  // This rank's libraries and machine (runtime/run_environment.h: environment_provenance).
  std::map<std::string, std::string> environment;
};

class TrainingObserver {
 public:
  virtual ~TrainingObserver() = default;
  // Every rank, once the run is set up, before its first update: a start that fails earlier
  // tells nothing.
  virtual void on_start(const RunStart& start) { (void)start; }
  // Rank 0, after each checkpoint is written (step checkpoints and best.h5).
  virtual void on_checkpoint(const std::string& path, std::int64_t step) {
    (void)path;
    (void)step;
  }
  // Every rank, when the run returns.
  virtual void on_end(const TrainResult& result) { (void)result; }
  // Every rank, when the run throws, before the exception leaves it.
  virtual void on_failure(const std::string& what) { (void)what; }
};

}  // namespace nmt::train
