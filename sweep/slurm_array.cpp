#include "sweep/slurm_array.h"

#include <fmt/format.h>

#include <sstream>

namespace nmt::sweep {
namespace {

std::string quote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

}  // namespace

std::string slurm_array_script(const SweepSpec& spec, const SlurmOptions& o) {
  std::ostringstream s;
  s << "#!/usr/bin/env bash\n"
    << fmt::format("# nmt-sweep {} ({} rows), written by nmt-sweep --slurm from {}\n", spec.name,
                   spec.rows.size(), o.spec_path)
    << fmt::format("#SBATCH --job-name=sweep-{}\n", spec.name)
    << fmt::format("#SBATCH --array=0-{}{}\n", spec.rows.size() - 1,
                   o.max_parallel > 0 ? fmt::format("%{}", o.max_parallel) : "")
    << "#SBATCH --ntasks=1\n"
    << fmt::format("#SBATCH --cpus-per-task={}\n", o.cpus_per_task)
    << (o.gpus_per_task > 0 ? fmt::format("#SBATCH --gpus-per-task={}\n", o.gpus_per_task) : "")
    << (o.partition.empty() ? "" : fmt::format("#SBATCH --partition={}\n", o.partition))
    << fmt::format("#SBATCH --time={}\n", o.time_limit) << "#SBATCH --requeue\n"
    << "#SBATCH --signal=B:USR1@180\n"
    << fmt::format("#SBATCH --output={}/slurm-%A_%a.out\n", o.sweep_dir)
    << "# Preemption notice: requeue this task; it resumes its row from the newest checkpoint.\n"
    << "trap 'scontrol requeue \"${SLURM_ARRAY_JOB_ID}_${SLURM_ARRAY_TASK_ID}\"' USR1\n"
    << "set -euo pipefail\n"
    << quote(o.nmt_sweep) << " --spec " << quote(o.spec_path) << " --sweep-dir "
    << quote(o.sweep_dir) << " --row \"$SLURM_ARRAY_TASK_ID\"";
  for (const auto& a : o.sweep_args) s << " " << quote(a);
  s << " &\nwait $! || wait $!\n";
  return s.str();
}

}  // namespace nmt::sweep
