#pragma once
// The training loop (paper section 5): token-based batches, Adam with the warmup/inverse-sqrt
// schedule, label-smoothed loss, gradient accumulation to reach the paper's ~25k tokens per
// update, periodic validation and checkpoints, and exact resume from the newest checkpoint.
// One update:
//   for each of this rank's `accumulation` batches: loss = smoothed CE summed over tokens; backward
//   gradients summed over ranks (data parallelism), /= target tokens of the update on all ranks;
//   an update with non-finite gradients is skipped (skipped_updates.h); optional clipping;
//   lr = noam(step), times the cool-down over the run's last fraction (train.cooldown); Adam step
// Data parallelism: every rank holds a replica (rank 0's initial parameters, broadcast and
// checked), takes its share of each update's batches (train.update_batches, the same batches on
// any number of ranks; batch_stream.h), and applies the same reduced update. Dropout is seeded per
// micro-batch from (seed, step, index in the update), so the masks do not depend on the rank
// either: a run resumed on a different number of ranks continues as the uninterrupted run would.
// Rank 0 alone writes checkpoints and metrics.
// The loop is this file's; its parts: training_data.h (the shards and batchers), resume.h (the
// newest checkpoint, loaded and checked), data_parallel.h (the device and the other ranks),
// updater.h (one update), update_agreement.h (what the ranks agree on after it), schedule.h (when
// to log, validate, save and stop, and the run's clock), update_log.h (the train/* metrics).

#include <ATen/core/Tensor.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/stop_signals.h"
#include "preprocess/shard_format.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/config/train_config.h"
#include "trainer/distributed/communicator.h"
#include "trainer/runtime/device_assignment.h"
#include "trainer/train/metrics_sink.h"
#include "trainer/train/training_observer.h"

namespace nmt::train {

class Resume;

class Trainer {
 public:
  // `config.model.vocab_size` must match the shards' vocabulary (nmt-train sets it from the
  // manifest). Writes config.yaml, metrics and checkpoints under `run_dir` (rank 0 of `comm`).
  Trainer(RunConfig config, std::string run_dir, std::shared_ptr<MetricsSink> sink,
          distributed::Communicator comm = distributed::Communicator::self());
  ~Trainer();

  // Trains to config.train.max_steps. With `resume`, continues from the newest checkpoint of
  // run_dir (bit-identical to an uninterrupted run on CPU); without, run_dir must hold none.
  TrainResult run(bool resume);
  // The same from a Resume of this run directory (resume.h) built before.
  TrainResult run(const Resume& resume);

  // Polled once per update on every rank (nmt-train: StopSignals::requested). When any rank
  // answers other than kNone, every rank finishes that update, rank 0 writes a checkpoint, and
  // run() returns with `stopped` set.
  void set_stop_source(std::function<StopReason()> poll);
  // Told of the run's start, checkpoints, end and failure (training_observer.h), in the order
  // added. Before run().
  void add_observer(std::shared_ptr<TrainingObserver> observer);
  // Called on every rank after each update's backward pass and gradient all-reduce, before the
  // gradients are checked and applied, with the update's step (1-based) and the parameters: tests
  // inject faults (a NaN into a gradient) through it.
  using GradientHook = std::function<void(std::int64_t step, const std::vector<at::Tensor>&)>;
  void set_after_backward(GradientHook hook);
  // The launcher's variables (nmt-train reads them from the environment), for the choice of this
  // rank's GPU beside the communicator's local rank (runtime/device_assignment.h). Before run().
  void set_launcher(runtime::LauncherVariables launcher);
  // The run's uid (run_identity.h), written into its checkpoints; a resume refuses a newest
  // checkpoint written under another uid. Rank 0, before run().
  void set_run_uid(std::string uid);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nmt::train
