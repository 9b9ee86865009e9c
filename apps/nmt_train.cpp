// nmt-train: trains the Transformer, as one process or as a data-parallel job of MPI ranks
// (`mpirun -np N nmt-train ...`, `srun nmt-train ...`), or with --count-params prints the
// parameter count of the model a config builds.
//
// Exit codes: 0 trained to train.max_steps (or stopped early on validation); 1 an error; 2 an
// argument error; 74 stopped with a checkpoint because metrics.jsonl cannot be written; 75 stopped
// by SIGTERM or SIGUSR1 (preemption, scancel, requeue, a time-limit warning) and 130 by SIGINT or
// SIGUSR2, both after finishing the update in flight and writing a checkpoint (--resume continues
// exactly); 128 + signal when a second signal did not wait for that.

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "apps/runtime_flags.h"
#include "apps/tool_main.h"
#include "apps/tracker_flags.h"
#include "common/cli.h"
#include "common/dir_lock.h"
#include "common/environment.h"
#include "common/git_state.h"
#include "common/run_layout.h"
#include "common/stop_signals.h"
#include "common/thread_pools.h"
#include "preprocess/shard_format.h"
#include "tracker/client/daemon_address.h"
#include "tracking/run_identity.h"
#include "tracking/run_tracking.h"
#include "tracking/tracked_training.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/distributed/mpi_context.h"
#include "trainer/model/transformer.h"
#include "trainer/runtime/blas_backend.h"
#include "trainer/runtime/device_assignment.h"
#include "trainer/train/resume.h"
#include "trainer/train/trainer.h"

namespace {

struct Options {
  std::string config_file;
  std::vector<std::string> overrides;
  std::vector<std::string> flag_overrides;  // the shortcut flags' (runtime_flags.h), after --set
  std::string run_dir;
  bool resume = false;
  bool count_params = false;
  std::int64_t vocab_size = 0;
  nmt::tracker::DaemonSettings tracker;  // the --tracker-* flags
  std::string command_line;              // for the run's provenance
};

// What the tracker flags say about where the daemon is, and how they rank (for --help).
constexpr const char* kTrackerHelp =
    "The tracker: --tracker-url or --tracker-port-file, else the config's tracker.url or "
    "tracker.port_file, else the environment variable NMT_TRACKER_URL; none of them: no "
    "tracking. Its token: --tracker-token-file, else tracker.token_file, else the file named by "
    "NMT_TRACKER_TOKEN_FILE. For an https tracker, the CAs that sign its certificate: "
    "--tracker-ca-file, else tracker.ca_file, else NMT_TRACKER_CA_FILE, else the system's. An "
    "explicit flag beats the config, which beats the environment.";

std::string default_run_dir() {
  const auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
  return std::string("runs/train-") + stamp;
}

// Provenance is read here, in main's file: nothing below main reads the environment. The run's
// start adds the rest (precision reason, the device's environment: tracked_training.h).
nmt::tracking::RunProvenance provenance(const nmt::distributed::Communicator& world,
                                        const Options& o) {
  nmt::tracking::RunProvenance p;
  char host[256] = {0};
  if (gethostname(host, sizeof host - 1) == 0) p.host = host;
  const auto& git = nmt::git_state();
  p.git_revision = git.revision;
  p.git_dirty = git.dirty;
  p.git_diff_sha256 = git.diff_sha256;
  p.command_line = o.command_line;
  p.world_size = world.size();
  p.hosts = world.hosts();
  const auto env = nmt::environment_text;
  p.slurm_job_id = env("SLURM_JOB_ID");
  if (!env("SLURM_ARRAY_JOB_ID").empty())
    p.slurm_array_id = env("SLURM_ARRAY_JOB_ID") + "_" + env("SLURM_ARRAY_TASK_ID");
  return p;
}

// Rank 0 takes the run directory's lock; every rank learns whether it did, so that a refused
// start ends the whole job at once.
std::unique_ptr<nmt::DirectoryLock> own_run_dir(const std::string& run_dir,
                                                const nmt::distributed::Communicator& world) {
  std::unique_ptr<nmt::DirectoryLock> lock;
  std::string refused;
  if (world.is_root()) {
    try {
      lock = std::make_unique<nmt::DirectoryLock>(run_dir, "nmt-train");
    } catch (const std::exception& e) {
      refused = e.what();
    }
  }
  world.broadcast(refused);
  if (!refused.empty()) throw std::runtime_error(refused);
  return lock;
}

// The config file to load: --config, else for --resume the run directory's config.yaml (the
// resolved config the run was trained with) where there is one, else none (the built-in base).
std::string config_file_of(const Options& o) {
  if (!o.config_file.empty() || !o.resume || o.run_dir.empty()) return o.config_file;
  const std::string stored = nmt::run_layout::config_path(o.run_dir);
  if (!std::filesystem::exists(stored)) return {};
  spdlog::info("config: {} (the run's; --config not given)", stored);
  return stored;
}

int train(nmt::RunConfig config, const Options& o, const nmt::distributed::Communicator& world) {
  nmt::runtime::check_blas_backend();
  if (config.data.dir.empty())
    throw std::invalid_argument("data.dir: no shards given (--data DIR)");
  const auto manifest = nmt::preprocess::read_manifest(config.data.dir);
  if (o.vocab_size > 0 && o.vocab_size != manifest.vocab_size) {
    throw std::invalid_argument(fmt::format("--vocab-size {} but the shards in {} use {}",
                                            o.vocab_size, config.data.dir, manifest.vocab_size));
  }
  config.model.vocab_size = manifest.vocab_size;
  std::string run_dir = o.run_dir.empty() ? default_run_dir() : o.run_dir;
  world.broadcast(run_dir);  // a default name has rank 0's timestamp
  // Rank 0 owns the run directory until it exits; a second trainer on it stops here, every rank,
  // naming the holder. A refused start changes nothing but the lock file: not the run's files,
  // not the tracker.
  const auto lock = own_run_dir(run_dir, world);
  // The checkpoint a resume continues from, or the refusal of a fresh start over checkpoints.
  const nmt::train::Resume resume(run_dir, o.resume);
  // Rank 0 alone writes metrics and talks to the tracker; the others' sink discards.
  auto sink = std::make_shared<nmt::train::FanoutMetricsSink>();
  std::shared_ptr<nmt::tracking::TrackedTraining> tracked;
  nmt::train::Trainer trainer(config, run_dir, sink, world);
  trainer.set_launcher(nmt::runtime::read_launcher_variables(nmt::process_environment));
  if (world.is_root()) {
    nmt::checkpoint::remove_stale_temporaries(run_dir);
    // One line per step: the steps after the checkpoint resumed from are trained and logged again.
    const std::string metrics_path = nmt::run_layout::metrics_path(run_dir);
    auto recorded = nmt::train::trim_metrics_log(metrics_path, resume.step());
    sink->add(std::make_shared<nmt::train::JsonlMetricsSink>(metrics_path));
    auto identity = nmt::tracking::next_run_identity(run_dir, o.resume);
    if (identity.attempt == 1 && !config.tracker.run_name.empty()) {
      identity.name = config.tracker.run_name;
    }
    identity.world_size = world.size();
    identity.hosts = world.hosts();
    nmt::tracking::write_run_identity(run_dir, identity);
    trainer.set_run_uid(identity.uid);
    tracked =
        std::make_shared<nmt::tracking::TrackedTraining>(nmt::tracking::TrackedTraining::Settings{
            run_dir, identity, provenance(world, o),
            nmt::tracking::daemon_sources(o.tracker, config.tracker), nmt::process_environment,
            std::move(recorded)});
    trainer.add_observer(tracked);
    sink->add(tracked);
    // A hung or lost peer aborts the job from the watchdog: the tracked run ends failed, not
    // running.
    nmt::distributed::Communicator::set_abort_hook(
        [weak = std::weak_ptr(tracked)](const std::string& why) {
          if (auto observer = weak.lock()) observer->on_failure(why);
        });
  }
  // From here SIGTERM/SIGINT/SIGUSR1 stop at the next update boundary, with a checkpoint.
  nmt::StopSignals signals;
  trainer.set_stop_source(&nmt::StopSignals::requested);
  nmt::train::TrainResult result;
  try {
    result = trainer.run(resume);
  } catch (const std::exception& e) {
    // The tracked run is marked failed by now (the trainer told its observers). The other ranks
    // may be inside a collective: end them all rather than leave them waiting.
    if (world.size() > 1) {
      nmt::distributed::Communicator::abort_job(fmt::format("rank {}: {}", world.rank(), e.what()),
                                                1);
    }
    throw;
  }
  const int code = nmt::exit_code(result.stopped);
  if (world.is_root()) sink->flush();  // lines a failed write left waiting, once more
  // The other ranks wait for rank 0's report: with `srun --kill-on-bad-exit`, a rank exiting 75
  // first would get rank 0 killed before the tracker knows.
  if (world.size() > 1) world.barrier();
  if (!world.is_root()) return code;
  if (result.stopped == nmt::StopReason::kUnrecorded) {
    if (const std::string why = sink->failure(); !why.empty()) {
      spdlog::error(
          "{}; stopped at step {} with a checkpoint (exit code {}): once the file can be written, "
          "continue with --resume",
          why, result.steps, code);
    } else {
      spdlog::warn(
          "stopped at step {} with a checkpoint, since the metrics could not be written for a "
          "while (they are now; exit code {}): continue with --resume",
          result.steps, code);
    }
    return code;
  }
  if (result.stopped != nmt::StopReason::kNone) {
    std::cout << fmt::format(
        "stopped ({}, signal {}) at step {} after training {} steps in {:.1f} s; checkpoint "
        "written; continue with --resume --run-dir {} (exit code {})\n",
        nmt::stop_reason_name(result.stopped), nmt::StopSignals::signal_number(), result.steps,
        result.steps_this_process, result.seconds, run_dir, code);
    return code;
  }
  if (result.steps_this_process == 0) {
    std::cout << fmt::format("nothing to train: {} already reached {} (step {})\n", run_dir,
                             result.out_of_time ? "train.max_minutes" : "train.max_steps",
                             result.steps);
    return 0;
  }
  // validate_every 0 (a sweep row scores its averaged checkpoint afterwards) leaves no best nll.
  const std::string validation =
      std::isfinite(result.best_valid_nll)
          ? fmt::format("best validation nll {:.4f} (perplexity {:.2f})", result.best_valid_nll,
                        std::exp(result.best_valid_nll))
          : std::string("no validation during training");
  std::cout << fmt::format(
      "trained {} steps in {:.1f} s (step {} reached{}); last loss {:.4f}; {}; {} parameters; {} "
      "rank(s), {:.1f}% of "
      "step time waiting on all-reduce; run directory {}\n",
      result.steps_this_process, result.seconds, result.steps,
      result.out_of_time ? ", at train.max_minutes" : "", result.last_train_loss, validation,
      result.parameters, world.size(), 100.0 * result.allreduce_fraction, run_dir);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  nmt::settle_openmp_waiting(argv);  // before MPI_Init: it may run the process again
  Options o;
  o.command_line = nmt::shell_command_line(argc, argv);
  nmt::distributed::MpiContext mpi(&argc, &argv);
  CLI::App app{"Train the Transformer (Vaswani et al. 2017) on nmt-preprocess shards.",
               "nmt-train"};
  auto log = nmt::apps::tool_log(app);
  if (mpi.world().size() > 1) log.rank = mpi.world().rank();
  app.add_option("--config", o.config_file,
                 "YAML run config (configs/base.yaml, configs/big.yaml...); with --resume, "
                 "RUN_DIR/config.yaml when not given");
  app.add_option("--set", o.overrides, "Override a config key, e.g. --set model.d_model=256");
  app.add_option("--run-dir", o.run_dir, "Run directory (config, metrics, checkpoints)");
  nmt::apps::add_config_flags(app, o.flag_overrides);
  app.add_flag("--resume", o.resume, "Continue from the newest checkpoint in --run-dir");
  app.add_flag("--count-params", o.count_params, "Print the model's parameter count and exit");
  nmt::apps::add_tracker_flags(app, o.tracker, "Report to ", "tracker.url");
  app.footer(kTrackerHelp);
  app.add_option("--vocab-size", o.vocab_size,
                 "Vocabulary size (--count-params; checked against the shards)");
  return nmt::apps::run_main(app, log, argc, argv, [&] {
    if (mpi.world().rank() == 0 && !mpi.collective_choice().empty()) {
      spdlog::info("mpi: {}", mpi.collective_choice());
    }
    auto overrides = o.overrides;
    overrides.insert(overrides.end(), o.flag_overrides.begin(), o.flag_overrides.end());
    auto config = nmt::load_run_config(config_file_of(o), overrides);
    nmt::tracking::record_daemon_flags(o.tracker, config.tracker);
    if (o.count_params) {
      if (o.vocab_size > 0) config.model.vocab_size = o.vocab_size;
      config.model.validate();
      const auto count = nmt::model::Transformer(config.model)->parameter_count();
      spdlog::info(
          "{} layers, d_model {}, d_ff {}, {} heads, d_k {}, d_v {}, vocabulary {}: {} parameters "
          "(formula: {})",
          config.model.layers, config.model.d_model, config.model.d_ff, config.model.heads,
          config.model.d_k, config.model.d_v, config.model.vocab_size, count,
          config.model.expected_parameter_count());
      std::cout << count << "\n";
      return 0;
    }
    return train(config, o, mpi.world());
  });
}
