// nmt-sweep: runs an ablation sweep (paper Table 3 style) from a spec: every row trains, averages
// its last checkpoints, and is scored on the dev split, recorded in the tracker with its row
// label, so `nmt-tracker table --sweep NAME` prints the table. Locally (K rows at a time; a re-run
// skips finished rows and resumes interrupted ones) or as a Slurm array (--slurm FILE [--submit]),
// one array task per row with --ranks-per-row ranks (or --gpus-per-row ranks of one GPU each).
// Exit codes: 0 every row done; 1 an error or a failed row; 2 an argument error; 75 stopped by
// SIGTERM/SIGUSR1 and 130 by SIGINT, passed on to the rows, which checkpoint (a later nmt-sweep
// resumes them).

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "apps/tool_main.h"
#include "common/atomic_file.h"
#include "common/cli.h"
#include "sweep/row_runner.h"
#include "sweep/slurm_array.h"
#include "sweep/sweep_spec.h"

namespace {

namespace fs = std::filesystem;

struct Options {
  std::string spec, sweep_dir, tracker_port_file, tracker_url, launcher, slurm_file, device;
  std::string partition, time_limit = "12:00:00";
  bool dry_run = false, submit = false;
  int parallel = 1, threads = 0, row = -1, ranks = 0, gpus = 0, cpus = 8;
};

std::string self_dir() {
  return fs::read_symlink("/proc/self/exe").parent_path().string();
}

std::vector<std::string> split_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

void print_plan(const std::vector<nmt::sweep::RowPlan>& rows) {
  for (const auto& r : rows) {
    std::string overrides;
    for (const auto& o : r.overrides) overrides += (overrides.empty() ? "" : " ") + o;
    std::cout << fmt::format("{:<6} {:<14} {:<11} {}\n", r.label, r.slug, to_string(r.state()),
                             overrides.empty() ? "(base)" : overrides);
  }
}

// --gpus-per-row G: G ranks of one GPU each; --ranks-per-row N without GPUs. Both: must agree.
int ranks_per_row(const Options& o) {
  if (o.gpus > 0 && o.ranks > 0 && o.ranks != o.gpus) {
    throw nmt::UsageError(
        fmt::format("--ranks-per-row {} and --gpus-per-row {}: one rank per GPU; give one of them",
                    o.ranks, o.gpus));
  }
  return o.gpus > 0 ? o.gpus : std::max(o.ranks, 1);
}

int write_slurm(const nmt::sweep::SweepSpec& spec, const Options& o) {
  nmt::sweep::SlurmOptions s;
  s.nmt_sweep = self_dir() + "/nmt-sweep";
  s.spec_path = fs::absolute(o.spec).string();
  s.sweep_dir = fs::absolute(o.sweep_dir).string();
  if (!o.tracker_url.empty())
    s.sweep_args.insert(s.sweep_args.end(), {"--tracker-url", o.tracker_url});
  if (!o.tracker_port_file.empty()) {
    s.sweep_args.insert(s.sweep_args.end(),
                        {"--tracker-port-file", fs::absolute(o.tracker_port_file).string()});
  }
  s.partition = o.partition;
  s.time_limit = o.time_limit;
  s.ranks_per_row = ranks_per_row(o);
  s.gpu_per_rank = o.gpus > 0;
  s.cpus_per_rank = o.cpus;
  s.device = !o.device.empty() ? o.device : (o.gpus > 0 ? "cuda" : "");
  s.launcher = o.launcher;
  s.max_parallel = o.parallel > 1 ? o.parallel : 0;
  fs::create_directories(s.sweep_dir);
  nmt::write_file_atomically(o.slurm_file, nmt::sweep::slurm_array_script(spec, s));
  std::cout << fmt::format("wrote {} (array of {} rows, {} rank(s) each{})\n", o.slurm_file,
                           spec.rows.size(), s.ranks_per_row, s.gpu_per_rank ? ", 1 GPU each" : "");
  if (!o.submit) return 0;
  const std::string command = "sbatch '" + o.slurm_file + "'";
  const int status = std::system(command.c_str());
  if (status != 0) throw std::runtime_error(command + " failed");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Run an ablation sweep (paper Table 3): train, average and score every row.",
               "nmt-sweep"};
  Options o;
  app.add_option("--spec", o.spec, "Sweep spec (configs/sweeps/*.yaml)")->required();
  app.add_flag("--dry-run", o.dry_run, "List the rows (label, directory, state, overrides)");
  app.add_option("--sweep-dir", o.sweep_dir, "Where the rows go (default runs/sweeps/<name>)");
  app.add_option("--parallel", o.parallel, "Rows at a time (local); array limit (Slurm)")
      ->capture_default_str();
  app.add_option("--threads", o.threads, "CPU threads per rank (0: the tools' default)");
  app.add_option("--device", o.device,
                 "Device of each row's training and evaluation: cpu, cuda... (default: the "
                 "config's for training, cpu for evaluation; cuda with --gpus-per-row)");
  app.add_option("--row", o.row, "Run only this row index (what each Slurm array task does)");
  app.add_option("--tracker-port-file", o.tracker_port_file, "nmt-trackerd's port file");
  app.add_option("--tracker-url", o.tracker_url, "nmt-trackerd at http://HOST:PORT");
  app.add_option("--launcher", o.launcher,
                 "Prefix of each row's nmt-train command, e.g. \"mpirun -np 2\"");
  app.add_option("--slurm", o.slurm_file, "Write a Slurm array script here instead of running");
  app.add_flag("--submit", o.submit, "With --slurm: also sbatch it");
  app.add_option("--partition", o.partition, "With --slurm: partition");
  app.add_option("--time", o.time_limit, "With --slurm: time limit per row")->capture_default_str();
  app.add_option("--ranks-per-row", o.ranks, "With --slurm: MPI ranks training each row (1)");
  app.add_option("--gpus-per-row", o.gpus,
                 "With --slurm: GPUs per row, one rank on each (sets the ranks)");
  app.add_option("--cpus-per-task", o.cpus, "With --slurm: CPUs per rank (also its threads)")
      ->capture_default_str();
  return nmt::apps::run_main(app, argc, argv, [&] {
    const auto spec = nmt::sweep::load_sweep_spec(o.spec);
    if (o.sweep_dir.empty()) o.sweep_dir = "runs/sweeps/" + spec.name;
    if (!o.slurm_file.empty()) return write_slurm(spec, o);
    nmt::sweep::RunnerOptions r;
    r.sweep_dir = o.sweep_dir;
    r.tools_dir = self_dir();
    r.launcher = split_words(o.launcher);
    r.tracker_port_file = o.tracker_port_file;
    r.tracker_url = o.tracker_url;
    r.threads = o.threads;
    r.device = o.device;
    auto rows = nmt::sweep::plan_rows(spec, r);
    if (o.dry_run) {
      print_plan(rows);
      return 0;
    }
    if (o.row >= 0) {
      if (o.row >= static_cast<int>(rows.size()))
        throw std::invalid_argument(
            fmt::format("--row {}: the sweep has {} rows", o.row, rows.size()));
      rows = {rows[static_cast<std::size_t>(o.row)]};
    }
    if (r.tracker_port_file.empty() && r.tracker_url.empty())
      spdlog::warn("no tracker given: rows are scored into eval.json but not recorded");
    spdlog::info("sweep {}: {} rows, {} at a time, in {}", spec.name, rows.size(), o.parallel,
                 o.sweep_dir);
    // Under Slurm, its SIGTERM reaches every process of the job: the rows get it without us.
    const bool in_slurm_job = std::getenv("SLURM_JOB_ID") != nullptr;
    const auto summary = nmt::sweep::run_rows(rows, o.parallel, !in_slurm_job);
    if (summary.failed > 0)
      throw std::runtime_error(fmt::format("{} row(s) failed", summary.failed));
    if (summary.stop_signal != 0) {
      spdlog::warn("sweep {}: stopped by signal {}; run nmt-sweep again to resume the rows",
                   spec.name, summary.stop_signal);
      return summary.stop_exit_code;
    }
    if (!r.tracker_port_file.empty() || !r.tracker_url.empty()) {
      spdlog::info(
          "the table: {}/nmt-tracker {} table --sweep {}", self_dir(),
          r.tracker_url.empty() ? "--port-file " + r.tracker_port_file : "--url " + r.tracker_url,
          spec.name);
    }
    return 0;
  });
}
