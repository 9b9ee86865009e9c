#pragma once
// Runs a sweep's rows on this machine. A row is three commands, each a separate process so the
// training can be an MPI job (a launcher prefix such as "mpirun -np 2"):
//   nmt-train    --config BASE --set ... --run-dir ROW/train --resume   (tracker run tagged with
//                 the sweep, the row label and index, and the row's reference figures, which
//                 nmt-train registers as the params reference.ppl, reference.bleu and
//                 reference.params: the sweep table's reference columns)
//   nmt-average  --run-dir ROW/train --last K --output ROW/averaged.h5
//   nmt-evaluate --checkpoint ROW/averaged.h5 --split valid --record --json > ROW/eval.json
// ROW/eval.json appears (atomically) only when all three succeeded: it marks a finished row, which
// a re-run skips; a row with checkpoints but no eval.json resumes from its newest checkpoint.
// SIGTERM, SIGINT and SIGUSR1 are passed on to the running stages (sweep/signal_relay.h): no new
// stage starts, and run_rows returns once they have stopped.

#include <string>
#include <vector>

#include "sweep/sweep_spec.h"

namespace nmt::sweep {

struct RunnerOptions {
  std::string sweep_dir;  // rows go to sweep_dir/<slug>/
  std::string tools_dir;  // where nmt-train, nmt-average, nmt-evaluate are
  // Prefix of the nmt-train command, e.g. {"mpirun", "-np", "2"}.
  std::vector<std::string> launcher;
  // Passed to nmt-train and nmt-evaluate --record; neither: the dev scores are not recorded (a
  // row's nmt-train still reports to the daemon of NMT_TRACKER_URL when that is set).
  std::string tracker_port_file;  // or tracker_url
  std::string tracker_url;
  int threads = 0;     // CPU threads per rank (0: the tools' default)
  std::string device;  // --device of nmt-train and nmt-evaluate (empty: the tools' default)
};

enum class RowState { kPending, kInterrupted, kDone };
const char* to_string(RowState state);

struct RowPlan {
  std::size_t index = 0;
  std::string label, slug, run_name, dir;
  std::vector<std::string> overrides;
  std::vector<std::vector<std::string>> commands;  // train, average, evaluate
  bool train_launched = false;                     // commands[0] starts with a launcher
  RowState state() const;
};

std::vector<RowPlan> plan_rows(const SweepSpec& spec, const RunnerOptions& options);

struct RunSummary {
  int failed = 0;          // rows whose stage failed (their log: ROW/log.txt)
  int stop_signal = 0;     // the signal that stopped the sweep early (0: none)
  int stop_exit_code = 0;  // 75 (SIGTERM/SIGUSR1: preempted), 130 (SIGINT); 0: not stopped
};

// Runs the rows that are not done, `parallel` at a time, logging progress. forward_term: pass a
// SIGTERM on to the rows (false under Slurm, which signals every process of the job itself).
RunSummary run_rows(const std::vector<RowPlan>& rows, int parallel, bool forward_term = true);

}  // namespace nmt::sweep
