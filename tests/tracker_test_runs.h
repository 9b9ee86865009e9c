#pragma once
// What the tracker's client and CLI tests share: nmt-trackerd as a child process, a write client's
// options against a daemon, a run to register, and nmt-tracker run as a user runs it (through the
// shell, stdout captured).

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tests/test_utils.h"
#include "tracker/client/tracker_client.h"

namespace nmt::tracker {

using namespace std::chrono_literals;

// nmt-trackerd as a child process on `port` (0: any), ready once its port file appears.
class Daemon {
 public:
  explicit Daemon(const std::filesystem::path& dir, int port = 0,
                  std::vector<std::string> extra = {})
      : port_file_((dir / "port").string()) {
    std::filesystem::remove(port_file_);
    const std::string log = (dir / "daemon.log").string();
    std::vector<std::string> args = {
        "nmt-trackerd", "--db",    (dir / "t.db").string(), "--port", std::to_string(port),
        "--port-file",  port_file_};
    args.insert(args.end(), extra.begin(), extra.end());
    pid_ = ::fork();
    if (pid_ == 0) {
      const int out = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
      ::dup2(out, 1);
      ::dup2(out, 2);
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      ::execv(NMT_TRACKERD, argv.data());
      ::_exit(127);
    }
    // Up to 60 s, as tracker_daemon_harness.h allows: a loaded machine can start it slowly.
    for (int i = 0; i < 6000 && !std::filesystem::exists(port_file_); ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      std::this_thread::sleep_for(10ms);
    }
    if (!std::filesystem::exists(port_file_))
      throw std::runtime_error("nmt-trackerd did not start, see " + log);
    std::ifstream(port_file_) >> port_;
  }
  ~Daemon() { stop(); }
  void stop() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  int port() const { return port_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  const std::string& port_file() const { return port_file_; }

 private:
  std::string port_file_;
  pid_t pid_ = -1;
  int port_ = 0;
};

inline ClientOptions options_for(const std::string& url, const testing::TempDir& dir) {
  ClientOptions o;
  o.url = url;
  o.spool_path = dir.file("run/tracker_spool.rank0.jsonl");
  o.flush_interval = 50ms;
  o.max_retry_backoff = 200ms;
  o.close_timeout = 300ms;
  // A daemon that is down or refuses answers at once; one that is up may answer slowly on a loaded
  // machine (its database writes), and a timed-out request would be sent again.
  o.request_timeout = 30s;
  o.start_run_timeout = 30s;
  return o;
}

inline RunInfo run_info(const std::string& name) {
  RunInfo info;
  info.experiment = "client-test";
  info.name = name;
  info.sweep = "abl";
  info.row_label = "base";
  info.row_index = 0;
  info.params = {{"model.layers", 6.0}, {"model.parameter_count", 63082496.0}};
  return info;
}

// The token the tests give a daemon that requires one.
inline constexpr char kToken[] = "s3cret";

// dir/token holding kToken, owner-only as a token file should be; returns its path.
inline std::string write_token_file(const testing::TempDir& dir) {
  const std::string path = dir.file("token");
  testing::write_text(path, std::string(kToken) + "\n");
  std::filesystem::permissions(
      path, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  return path;
}

// nmt-trackerd in `dir` requiring kToken (from its token file), and a write client sending it.
struct TokenDaemon {
  explicit TokenDaemon(const testing::TempDir& dir)
      : token_file(write_token_file(dir)),
        daemon(dir.path(), 0, {"--token-file", token_file}),
        client([&] {
          ClientOptions o = options_for(daemon.url(), dir);
          o.token = kToken;
          return o;
        }()) {}
  std::string token_file;
  Daemon daemon;
  TrackerClient client;
};

// Registers run `name` (run_info) through `client` and logs train/loss at steps 0 to 4 (4.5 down
// to 0.5) and `eval`; returns the run's id. The caller flushes.
inline std::int64_t start_sample_run(TrackerClient& client, const std::string& name,
                                     const EvalRecord& eval) {
  const std::int64_t run = client.start_run(run_info(name)).value();
  for (int step = 0; step < 5; ++step) client.log_metric("train/loss", step, 4.5 - step);
  client.log_eval(eval);
  return run;
}

struct CliResult {
  int status = -1;
  std::string out;
};

// `args` through the shell (so they may hold quotes and VAR=value prefixes go before the binary:
// use run_cli_env); stderr is discarded unless `with_stderr`.
inline CliResult run_cli_env(const std::string& env, const std::string& args,
                             bool with_stderr = false) {
  const std::string command = env + (env.empty() ? "" : " ") + std::string(NMT_TRACKER_CLI) + " " +
                              args + (with_stderr ? " 2>&1" : " 2>/dev/null");
  FILE* pipe = ::popen(command.c_str(), "r");
  CliResult result;
  std::array<char, 4096> buffer{};
  for (std::size_t n; (n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0;) {
    result.out.append(buffer.data(), n);
  }
  const int status = ::pclose(pipe);
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return result;
}

inline CliResult run_cli(const std::string& args) {
  return run_cli_env("", args);
}

}  // namespace nmt::tracker
