#include "sweep/row_runner.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <system_error>
#include <thread>

#include "common/named_choices.h"
#include "sweep/signal_relay.h"

extern char** environ;

namespace nmt::sweep {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr NamedChoices<RowState, 3> kRowStates{{{{RowState::kPending, "pending"},
                                                 {RowState::kInterrupted, "interrupted"},
                                                 {RowState::kDone, "done"}}}};

std::string number(double value) {
  return fmt::format("{}", value);
}

std::vector<std::string> train_command(const SweepSpec& spec, const RowPlan& row,
                                       const RunnerOptions& o) {
  std::vector<std::string> c = o.launcher;
  c.push_back(o.tools_dir + "/nmt-train");
  for (const auto& s : {"--config", spec.base_config.c_str()}) c.emplace_back(s);
  for (const auto& override : spec.common_overrides) c.insert(c.end(), {"--set", override});
  for (const auto& override : row.overrides) c.insert(c.end(), {"--set", override});
  c.insert(c.end(), {"--run-dir", row.dir + "/train", "--resume", "--experiment", spec.experiment});
  c.insert(c.end(),
           {"--set", "tracker.sweep=" + spec.name, "--set", "tracker.row_label=" + row.label,
            "--set", fmt::format("tracker.row_index={}", row.index), "--set",
            "tracker.run_name=" + row.run_name});
  const auto& ref = spec.rows[row.index].reference;
  if (ref.ppl > 0) c.insert(c.end(), {"--set", "tracker.ref_ppl=" + number(ref.ppl)});
  if (ref.bleu > 0) c.insert(c.end(), {"--set", "tracker.ref_bleu=" + number(ref.bleu)});
  if (ref.params > 0) c.insert(c.end(), {"--set", "tracker.ref_params=" + number(ref.params)});
  if (!o.tracker_port_file.empty()) c.insert(c.end(), {"--tracker-port-file", o.tracker_port_file});
  if (!o.tracker_url.empty()) c.insert(c.end(), {"--tracker-url", o.tracker_url});
  if (o.threads > 0) c.insert(c.end(), {"--threads", std::to_string(o.threads)});
  if (!o.device.empty()) c.insert(c.end(), {"--device", o.device});
  return c;
}

std::vector<std::string> evaluate_command(const SweepSpec& spec, const RowPlan& row,
                                          const RunnerOptions& o) {
  std::vector<std::string> c = {o.tools_dir + "/nmt-evaluate",
                                "--checkpoint",
                                row.dir + "/averaged.h5",
                                "--split",
                                spec.eval.split,
                                "--beam",
                                std::to_string(spec.eval.beam),
                                "--alpha",
                                fmt::format("{}", spec.eval.alpha),
                                "--sentences",
                                std::to_string(spec.eval.sentences),
                                "--json"};
  // The row's tracked run is its training run's (ROW/train/run.json).
  if (!o.tracker_port_file.empty() || !o.tracker_url.empty()) {
    c.insert(c.end(), {"--record", "--run-dir", row.dir + "/train"});
  }
  if (!o.tracker_port_file.empty()) c.insert(c.end(), {"--tracker-port-file", o.tracker_port_file});
  if (!o.tracker_url.empty()) c.insert(c.end(), {"--tracker-url", o.tracker_url});
  if (o.threads > 0) c.insert(c.end(), {"--threads", std::to_string(o.threads)});
  // The row's device: a GPU row scores its averaged checkpoint on its GPU too.
  if (!o.device.empty()) c.insert(c.end(), {"--device", o.device});
  return c;
}

// Starts `command` with stdout to `out` and stderr to `log` (both appended to / truncated).
pid_t spawn(const std::vector<std::string>& command, const std::string& out,
            const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                   O_WRONLY | O_CREAT | (out == log ? O_APPEND : O_TRUNC), 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_APPEND, 0644);
  std::vector<char*> argv;
  for (const auto& a : command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  // A process group of its own: a terminal's Ctrl-C reaches nmt-sweep alone, which passes the stop
  // on once (SignalRelay); had the row seen it too, the relayed copy would be its second signal and
  // end it without a checkpoint.
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attributes, 0);
  pid_t pid = 0;
  const int error = posix_spawnp(&pid, argv[0], &actions, &attributes, argv.data(), environ);
  posix_spawnattr_destroy(&attributes);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    throw std::system_error(error, std::generic_category(), "cannot start " + command.front());
  }
  return pid;
}

}  // namespace

const char* to_string(RowState state) {
  return kRowStates.name(state);
}

RowState RowPlan::state() const {
  if (fs::exists(dir + "/eval.json")) return RowState::kDone;
  std::error_code ec;
  if (fs::exists(dir + "/train/checkpoints", ec) && !fs::is_empty(dir + "/train/checkpoints", ec))
    return RowState::kInterrupted;
  return RowState::kPending;
}

std::vector<RowPlan> plan_rows(const SweepSpec& spec, const RunnerOptions& options) {
  std::vector<RowPlan> plans;
  for (std::size_t i = 0; i < spec.rows.size(); ++i) {
    RowPlan row;
    row.index = i;
    row.label = spec.rows[i].label;
    row.slug = row_slug(spec, i);
    row.run_name = spec.name + "-" + row.slug;
    row.dir = (fs::path(options.sweep_dir) / row.slug).string();
    row.overrides = spec.rows[i].overrides;
    row.commands.push_back(train_command(spec, row, options));
    row.train_launched = !options.launcher.empty();
    row.commands.push_back({options.tools_dir + "/nmt-average", "--run-dir", row.dir + "/train",
                            "--last", std::to_string(spec.average_last), "--output",
                            row.dir + "/averaged.h5"});
    row.commands.push_back(evaluate_command(spec, row, options));
    plans.push_back(std::move(row));
  }
  return plans;
}

namespace {

// A row's stage in flight: the row and the index of its command.
struct Running {
  const RowPlan* row;
  std::size_t command;
};

// The rows not finished yet, in spec order; finished ones are reported as skipped.
std::vector<const RowPlan*> rows_to_run(const std::vector<RowPlan>& rows) {
  std::vector<const RowPlan*> queue;
  for (const auto& row : rows) {
    if (row.state() == RowState::kDone) {
      spdlog::info("row {} ({}): done already, skipped", row.index, row.label);
    } else {
      queue.push_back(&row);
    }
  }
  return queue;
}

// Starts one stage of a row. The evaluation writes its JSON to a partial file, renamed only
// when the row is complete, so eval.json marks a finished row.
pid_t launch(const RowPlan& row, std::size_t command) {
  fs::create_directories(row.dir);
  const std::string log = row.dir + "/log.txt";
  const bool evaluate = command + 1 == row.commands.size();
  if (command == 0) {
    spdlog::info("row {} ({}): {} ({})", row.index, row.label,
                 row.state() == RowState::kInterrupted ? "resuming" : "starting", log);
  }
  return spawn(row.commands[command], evaluate ? row.dir + "/eval.json.partial" : log, log);
}

void report_failure(const Running& stage, int status) {
  static const char* const kStages[] = {"nmt-train", "nmt-average", "nmt-evaluate"};
  spdlog::error("row {} ({}): {} failed ({}); see {}/log.txt", stage.row->index, stage.row->label,
                kStages[std::min<std::size_t>(stage.command, 2)],
                WIFEXITED(status) ? fmt::format("exit {}", WEXITSTATUS(status))
                                  : fmt::format("signal {}", WTERMSIG(status)),
                stage.row->dir);
}

// Waits for one of the running stages to end, passing signals on meanwhile. Polls (every 50 ms)
// rather than blocking in waitpid, so a signal that lands at any moment is relayed at once.
std::pair<pid_t, int> wait_for_stage(const std::map<pid_t, Running>& running, SignalRelay& relay) {
  std::vector<RelayTarget> targets;
  for (const auto& [pid, stage] : running)
    targets.push_back({pid, stage.command == 0 && stage.row->train_launched});
  for (;;) {
    relay.relay(targets);
    int status = 0;
    const pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid < 0 && errno != EINTR)
      throw std::system_error(errno, std::generic_category(), "waitpid");
    if (pid > 0) return {pid, status};
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

bool succeeded(int status) {
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

}  // namespace

RunSummary run_rows(const std::vector<RowPlan>& rows, int parallel, bool forward_term) {
  SignalRelay relay(forward_term);
  const std::vector<const RowPlan*> queue = rows_to_run(rows);
  const auto start = Clock::now();
  std::map<pid_t, Running> running;
  std::size_t next = 0, finished = 0;
  RunSummary summary;
  while ((next < queue.size() && relay.stop_signal() == 0) || !running.empty()) {
    while (next < queue.size() && relay.stop_signal() == 0 &&
           static_cast<int>(running.size()) < std::max(parallel, 1)) {
      running[launch(*queue[next], 0)] = {queue[next], 0};
      ++next;
    }
    if (running.empty()) break;
    const auto [pid, status] = wait_for_stage(running, relay);
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    const Running stage = it->second;
    running.erase(it);
    if (!succeeded(status) && relay.stop_signal() != 0) {
      spdlog::warn("row {} ({}): stopped by signal {}; a later nmt-sweep resumes it",
                   stage.row->index, stage.row->label, relay.stop_signal());
    } else if (!succeeded(status)) {
      ++summary.failed;
      report_failure(stage, status);
    } else if (stage.command + 1 < stage.row->commands.size()) {
      if (relay.stop_signal() != 0) continue;  // stopping: the next stage waits for a re-run
      running[launch(*stage.row, stage.command + 1)] = {stage.row, stage.command + 1};
    } else {
      fs::rename(stage.row->dir + "/eval.json.partial", stage.row->dir + "/eval.json");
      ++finished;
      const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      const auto left = queue.size() - finished - static_cast<std::size_t>(summary.failed);
      // Wall time per finished row already reflects the rows running side by side.
      spdlog::info("row {} ({}): done; {}/{} rows of this run in {:.0f} s, ETA {:.0f} s",
                   stage.row->index, stage.row->label, finished, queue.size(), elapsed,
                   elapsed / static_cast<double>(finished) * static_cast<double>(left));
    }
  }
  summary.stop_signal = relay.stop_signal();
  summary.stop_exit_code = relay.exit_code();
  return summary;
}

}  // namespace nmt::sweep
