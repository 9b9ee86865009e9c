#pragma once
// The train/* metrics and the progress line of the updates between two log steps: rank 0 writes
// them; every rank reports its own throughput and all-reduce wait through rank 0, so a straggler
// shows in the tracker as one rank's low tokens/s and the others' long waits.

#include <c10/core/Device.h>

#include <cstdint>

#include "trainer/dist/communicator.h"
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

// The figures of the log step's update.
struct UpdateFigures {
  std::int64_t step = 0;
  double loss = 0.0, nll = 0.0;  // per target token, over all ranks
  double lr = 0.0;
  double grad_norm = 0.0;
  std::int64_t skipped_updates = 0;  // of the run so far
};

// Logs `u` and the window `w` (every rank calls it on the same steps: a collective with several
// ranks). `device`: this rank's, whose peak memory is logged when it is a GPU.
void log_updates(MetricsSink& sink, const dist::Communicator& comm, const c10::Device& device,
                 const UpdateFigures& u, const LogWindow& w);

}  // namespace nmt::train
