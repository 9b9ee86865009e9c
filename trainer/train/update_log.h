#pragma once
// The train/* metrics and the progress line of the updates between two log steps: rank 0 writes
// them; every rank reports its own throughput and all-reduce wait through rank 0, so a straggler
// shows in the tracker as one rank's low tokens/s and the others' long waits. train/loss, train/nll
// and train/ppl are token-weighted means over the window's updates (fairseq's and Marian's
// convention), not the log step's update alone; train/window_updates and train/window_tgt_tokens
// say how many updates and target tokens they cover (updates skipped as non-finite are left out),
// and train/tokens the target tokens of every update so far (the dashboard's tokens axis; not
// logged by a run resumed from a checkpoint older than format 5, which does not know it).

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>

#include "trainer/distributed/communicator.h"
#include "trainer/train/metrics_sink.h"

namespace nmt::train {

// The updates since the last log step: their tokens (all ranks; local_tokens this rank's) and time.
struct LogWindow {
  std::int64_t steps = 0, tokens = 0, local_tokens = 0;
  double seconds = 0.0, allreduce_seconds = 0.0;
  void add(std::int64_t update_tokens, std::int64_t update_local_tokens, double step_seconds,
           double update_allreduce_seconds) {
    ++steps;
    tokens += update_tokens;
    local_tokens += update_local_tokens;
    seconds += step_seconds;
    allreduce_seconds += update_allreduce_seconds;
  }
};

// The losses of the updates since the last log step, summed on the device as they come (no read
// per update) and read once at the log step. The sums travel in checkpoints
// (TrainingState::window_*), so that a run resumed between two log steps logs, at the next one,
// the mean over the same updates as the uninterrupted run.
class LossWindow {
 public:
  // What the window holds over all ranks, as a checkpoint stores it.
  struct Totals {
    std::int64_t updates = 0, tgt_tokens = 0;
    double loss_sum = 0.0, nll_sum = 0.0;  // label-smoothed loss and nll, summed over tokens
  };

  // One update: this rank's loss sums (0-dim, on the device) and the target tokens of all ranks.
  void add(const at::Tensor& loss_sum, const at::Tensor& nll_sum, std::int64_t tgt_tokens);
  // The sums over all ranks: a read from the device and, with several ranks, a collective.
  Totals totals(const distributed::Communicator& comm) const;
  // Continues a window a checkpoint stored: rank 0 holds its sums, on `device`.
  void restore(const Totals& stored, const distributed::Communicator& comm,
               const c10::Device& device);
  void clear() { *this = LossWindow(); }
  std::int64_t updates() const { return updates_; }

 private:
  at::Tensor loss_, nll_;  // 0-dim fp64 on the device, this rank's; undefined while none
  std::int64_t updates_ = 0, tgt_tokens_ = 0;
};

// The figures of the log step: the window's mean losses, the rest the log step's update's.
struct UpdateFigures {
  std::int64_t step = 0;
  double loss = 0.0, nll = 0.0;        // per target token, over all ranks and the window's updates
  std::int64_t window_updates = 0;     // that the means cover (0: every one was skipped)
  std::int64_t window_tgt_tokens = 0;  // their target tokens, the means' weights
  std::int64_t tgt_tokens = 0;         // of the run's updates so far (-1: unknown, not logged)
  double lr = 0.0;
  double grad_norm = 0.0;
  std::int64_t skipped_updates = 0;  // of the run so far
};

// Logs `u` and the window `w` (every rank calls it on the same steps: a collective with several
// ranks). `device`: this rank's, whose peak memory is logged when it is a GPU.
void log_updates(MetricsSink& sink, const distributed::Communicator& comm,
                 const c10::Device& device, const UpdateFigures& u, const LogWindow& w);

}  // namespace nmt::train
