#include "sweep/slurm_array.h"

#include <fmt/format.h>

#include <sstream>
#include <stdexcept>

namespace nmt::sweep {
namespace {

std::string quote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string header(const SweepSpec& spec, const SlurmOptions& o) {
  std::ostringstream s;
  s << "#!/usr/bin/env bash\n"
    << fmt::format("# nmt-sweep {} ({} rows), written by nmt-sweep --slurm from {}\n", spec.name,
                   spec.rows.size(), o.spec_path)
    << fmt::format(
           "# Each array task trains one row with {} rank(s){}, then averages and scores "
           "it.\n",
           o.ranks_per_row, o.gpu_per_rank ? ", one GPU each" : "")
    << fmt::format("#SBATCH --job-name=sweep-{}\n", spec.name)
    << fmt::format("#SBATCH --array=0-{}{}\n", spec.rows.size() - 1,
                   o.max_parallel > 0 ? fmt::format("%{}", o.max_parallel) : "")
    << "#SBATCH --nodes=1\n"
    << fmt::format("#SBATCH --ntasks={}\n", o.ranks_per_row)
    << fmt::format("#SBATCH --cpus-per-task={}\n", o.cpus_per_rank)
    << (o.gpu_per_rank ? "#SBATCH --gpus-per-task=1\n" : "")
    << (o.partition.empty() ? "" : fmt::format("#SBATCH --partition={}\n", o.partition))
    << fmt::format("#SBATCH --time={}\n", o.time_limit) << "#SBATCH --requeue\n"
    << "#SBATCH --signal=B:USR1@180\n"
    << "#SBATCH --open-mode=append\n"
    << fmt::format("#SBATCH --output={}/slurm-%A_%a.out\n", o.sweep_dir);
  return s.str();
}

// The signal handling of jobs/slurm/train.sh, around nmt-sweep --row instead of srun.
constexpr const char* kBody =
    R"sh(# USR1 (time limit in 180 s): passed to nmt-sweep, which passes it to the row's ranks; they
# checkpoint and stop, nmt-sweep exits 75, and this task requeues itself. SIGTERM (scancel,
# requeue, preemption): Slurm signals the ranks itself; nothing to forward, and no self-requeue.
signal=''
pid=''
trap 'signal=USR1; [[ -n "$pid" ]] && kill -s USR1 "$pid" 2> /dev/null' USR1
trap 'signal=TERM' TERM
echo "$(date -u +%FT%TZ) array task ${SLURM_ARRAY_TASK_ID} (job $SLURM_JOB_ID, restart ${SLURM_RESTART_COUNT:-0})"
)sh";

constexpr const char* kWait = R"sh( &
pid=$!
while kill -0 "$pid" 2> /dev/null; do wait "$pid"; done
wait "$pid"
status=$?
if [[ $status -eq 75 && $signal == USR1 ]]; then
  echo "$(date -u +%FT%TZ) row checkpointed; requeueing task ${SLURM_ARRAY_TASK_ID}"
  scontrol requeue "$SLURM_JOB_ID"
  exit 0
fi
exit "$status"
)sh";

}  // namespace

void validate(const SlurmOptions& o) {
  if (o.ranks_per_row < 1)
    throw std::invalid_argument(fmt::format("--ranks-per-row {}: at least 1", o.ranks_per_row));
  if (o.cpus_per_rank < 1)
    throw std::invalid_argument(fmt::format("--cpus-per-task {}: at least 1", o.cpus_per_rank));
}

std::string slurm_array_script(const SweepSpec& spec, const SlurmOptions& o) {
  validate(o);
  // srun no longer passes the job's --cpus-per-task on (Slurm 22.05): say it.
  const std::string launcher =
      o.launcher.empty()
          ? fmt::format("srun --mpi=pmix --kill-on-bad-exit=1 --ntasks={} --cpus-per-task={}",
                        o.ranks_per_row, o.cpus_per_rank)
          : o.launcher;
  std::ostringstream s;
  s << header(spec, o) << kBody << quote(o.nmt_sweep) << " --spec " << quote(o.spec_path)
    << " --sweep-dir " << quote(o.sweep_dir) << " --row \"$SLURM_ARRAY_TASK_ID\" --launcher "
    << quote(launcher) << " --threads " << o.cpus_per_rank;
  if (!o.device.empty()) s << " --device " << quote(o.device);
  for (const auto& a : o.sweep_args) s << " " << quote(a);
  s << kWait;
  return s.str();
}

}  // namespace nmt::sweep
