#pragma once
// Slurm mode of nmt-sweep: an array job, one index per row. Each array task runs
// `nmt-sweep --spec SPEC --row $SLURM_ARRAY_TASK_ID` (the local runner on that one row) with the
// row's training launched as `srun --mpi=pmix` over the task's ranks (one GPU each when GPUs are
// asked for), so a task requeued after preemption resumes its row from the newest checkpoint, and
// a finished row is skipped if its task runs again. Signals as jobs/slurm/train.sh handles them:
// the time-limit notice (USR1, 180 s before) is passed to the row, which checkpoints, and the task
// requeues itself; Slurm's own SIGTERM (scancel, requeue, preemption) reaches the ranks directly.

#include <string>
#include <vector>

#include "sweep/sweep_spec.h"

namespace nmt::sweep {

struct SlurmOptions {
  std::string nmt_sweep;                // this binary, absolute
  std::string spec_path;                // absolute
  std::string sweep_dir;                // absolute
  std::vector<std::string> sweep_args;  // --tracker-url/--tracker-port-file...
  std::string partition, time_limit = "12:00:00";
  int ranks_per_row = 1;      // MPI ranks (Slurm tasks) training each row
  bool gpu_per_rank = false;  // one GPU per rank (--gpus-per-task=1)
  int cpus_per_rank = 8;      // --cpus-per-task, passed to srun and nmt-train's --threads
  std::string device;         // --device of the row's nmt-train and nmt-evaluate (empty: default)
  std::string launcher;       // empty: srun --mpi=pmix over the task's ranks
  int max_parallel = 0;       // %K on the array; 0: no limit
};

// Checks the options (ranks and CPUs at least 1); throws std::invalid_argument.
void validate(const SlurmOptions& options);

// The batch script text.
std::string slurm_array_script(const SweepSpec& spec, const SlurmOptions& options);

}  // namespace nmt::sweep
