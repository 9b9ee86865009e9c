#pragma once
// Exact resume: a run continues from its run directory's newest step checkpoint with the
// parameters, Adam's moments, the RNG states, the step, the data position, the validation record
// and the training time it held, under the precision and update size it was trained with. The
// checkpoint must belong to this run (its uid) and to these shards (their vocabulary's hash).

#include <optional>
#include <string>

#include "trainer/checkpoint/checkpoint.h"
#include "trainer/config/train_config.h"
#include "trainer/distributed/communicator.h"
#include "trainer/train/batch_stream.h"

namespace nmt::train {

class Resume {
 public:
  // Without `resume`, refuses a run directory that holds step checkpoints (std::runtime_error);
  // with it, picks the newest (none: the run starts fresh) and reads the config and the step it
  // holds. nmt-train builds this first, before it changes anything in the run directory, so that
  // a refused start leaves the directory as it was.
  Resume(std::string run_dir, bool resume);

  bool resuming() const { return !path_.empty(); }
  const std::string& path() const { return path_; }
  const std::string& run_dir() const { return run_dir_; }
  // The step the run continues from; 0 for a fresh run.
  std::int64_t step() const { return step_; }
  // The config the checkpoint was trained with, which setup resolves the precision and the
  // update's size against (run_choices.h); nullptr for a fresh run.
  const RunConfig* stored_config() const { return stored_ ? &*stored_ : nullptr; }

  // Loads the checkpoint into `model`, `optimizer` and `state`, and moves `batches` to its data
  // position, and closes the file. `state` comes in as a fresh run's: its vocabulary (the shards':
  // the hash, checked against the checkpoint's, and the model) and run uid (checked against the
  // checkpoint's where both have one) stay, so that later checkpoints carry them. Does nothing for
  // a fresh run.
  void restore(torch::nn::Module& model, torch::optim::Adam& optimizer, const RunConfig& config,
               checkpoint::TrainingState& state, BatchStream& batches,
               const distributed::Communicator& comm) const;

 private:
  std::string run_dir_;
  std::string path_;  // the newest step checkpoint; empty for a fresh run
  std::int64_t step_ = 0;
  std::optional<RunConfig> stored_;
  // The newest checkpoint, open until restored (pruning may delete the file while the run trains).
  mutable std::optional<checkpoint::CheckpointReader> reader_;
};

}  // namespace nmt::train
