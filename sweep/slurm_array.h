#pragma once
// Slurm mode of nmt-sweep: an array job, one index per row. Each array task runs
// `nmt-sweep --spec SPEC --row $SLURM_ARRAY_TASK_ID` (the local runner on that one row), so a task
// requeued after preemption resumes its row from the newest checkpoint, and a finished row is
// skipped if its task runs again.

#include <string>
#include <vector>

#include "sweep/sweep_spec.h"

namespace nmt::sweep {

struct SlurmOptions {
  std::string nmt_sweep;                // this binary, absolute
  std::string spec_path;                // absolute
  std::string sweep_dir;                // absolute
  std::vector<std::string> sweep_args;  // --tracker-url/--tracker-port-file, --threads, --launcher
  std::string partition, time_limit = "12:00:00";
  int gpus_per_task = 0;
  int cpus_per_task = 8;
  int max_parallel = 0;  // %K on the array; 0: no limit
};

// The batch script text.
std::string slurm_array_script(const SweepSpec& spec, const SlurmOptions& options);

}  // namespace nmt::sweep
