// nmt-sweep: runs an ablation sweep (paper Table 3 style) from a spec: every row trains, averages
// its last checkpoints, and is scored on the dev split, recorded in the tracker with its row
// label, so `nmt-tracker table --sweep NAME` prints the table. Locally (K rows at a time; a re-run
// skips finished rows and resumes interrupted ones) or as a Slurm array (--slurm FILE [--submit]).

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <sstream>

#include "common/atomic_file.h"
#include "common/cli.h"
#include "sweep/row_runner.h"
#include "sweep/slurm_array.h"
#include "sweep/sweep_spec.h"

namespace {

namespace fs = std::filesystem;

struct Options {
  std::string spec, sweep_dir, tracker_port_file, tracker_url, launcher, slurm_file;
  std::string partition, time_limit = "12:00:00";
  bool dry_run = false, submit = false;
  int parallel = 1, threads = 0, row = -1, gpus = 0, cpus = 8;
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
  if (o.threads > 0)
    s.sweep_args.insert(s.sweep_args.end(), {"--threads", std::to_string(o.threads)});
  if (!o.launcher.empty()) s.sweep_args.insert(s.sweep_args.end(), {"--launcher", o.launcher});
  s.partition = o.partition;
  s.time_limit = o.time_limit;
  s.gpus_per_task = o.gpus;
  s.cpus_per_task = o.cpus;
  s.max_parallel = o.parallel > 1 ? o.parallel : 0;
  fs::create_directories(s.sweep_dir);
  nmt::write_file_atomically(o.slurm_file, nmt::sweep::slurm_array_script(spec, s));
  std::cout << "wrote " << o.slurm_file << " (array of " << spec.rows.size() << " rows)\n";
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
  nmt::LogOptions log;
  log.tool = "nmt-sweep";
  app.add_option("--spec", o.spec, "Sweep spec (configs/sweeps/*.yaml)")->required();
  app.add_flag("--dry-run", o.dry_run, "List the rows (label, directory, state, overrides)");
  app.add_option("--sweep-dir", o.sweep_dir, "Where the rows go (default runs/sweeps/<name>)");
  app.add_option("--parallel", o.parallel, "Rows at a time (local); array limit (Slurm)")
      ->capture_default_str();
  app.add_option("--threads", o.threads, "CPU threads per row (0: the tools' default)");
  app.add_option("--row", o.row, "Run only this row index (what each Slurm array task does)");
  app.add_option("--tracker-port-file", o.tracker_port_file, "nmt-trackerd's port file");
  app.add_option("--tracker-url", o.tracker_url, "nmt-trackerd at http://HOST:PORT");
  app.add_option("--launcher", o.launcher,
                 "Prefix of each row's nmt-train command, e.g. \"mpirun -np 2\"");
  app.add_option("--slurm", o.slurm_file, "Write a Slurm array script here instead of running");
  app.add_flag("--submit", o.submit, "With --slurm: also sbatch it");
  app.add_option("--partition", o.partition, "With --slurm: partition");
  app.add_option("--time", o.time_limit, "With --slurm: time limit per row")->capture_default_str();
  app.add_option("--gpus-per-task", o.gpus, "With --slurm: GPUs per row");
  app.add_option("--cpus-per-task", o.cpus, "With --slurm: CPUs per row")->capture_default_str();
  nmt::add_logging_flags(app, log);
  return nmt::run_tool(app, log, argc, argv, [&] {
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
    const int failed = nmt::sweep::run_rows(rows, o.parallel);
    if (failed > 0) throw std::runtime_error(fmt::format("{} row(s) failed", failed));
    if (!r.tracker_port_file.empty() || !r.tracker_url.empty()) {
      spdlog::info(
          "the table: {}/nmt-tracker {} table --sweep {}", self_dir(),
          r.tracker_url.empty() ? "--port-file " + r.tracker_port_file : "--url " + r.tracker_url,
          spec.name);
    }
    return 0;
  });
}
