#pragma once
// What the tracker benchmarks share: a real nmt-trackerd started for them (127.0.0.1, --port 0,
// the port read back from --port-file), what /proc says of it, and SIGTERM to stop it; the machine
// line a report starts with (which CPU, how loaded); latency percentiles.

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "common/cpu_model.h"

extern char** environ;

namespace nmt::bench {

class BenchDaemon {
 public:
  // Starts `binary` on the database `db` with `flags` after the port ones; its stderr goes to
  // `log_file` when one is given. Returns once the daemon listens (at most 10 s).
  BenchDaemon(const std::string& binary, const std::filesystem::path& dir, const std::string& db,
              const std::vector<std::string>& flags, const std::string& log_file = "") {
    const std::string port_file = (dir / "port").string();
    std::filesystem::remove(port_file);
    std::vector<std::string> args = {binary, "--db", db, "--port", "0", "--port-file", port_file};
    args.insert(args.end(), flags.begin(), flags.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (!log_file.empty()) {
      posix_spawn_file_actions_addopen(&actions, 2, log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                       0644);
    }
    const int rc = posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("cannot start " + binary);
    for (int i = 0; i < 400 && port_ == 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
      std::ifstream(port_file) >> port_;
      if (port_ == 0 && ::waitpid(pid_, nullptr, WNOHANG) == pid_) {
        pid_ = 0;
        throw std::runtime_error(binary + " exited before listening");
      }
    }
    if (port_ == 0) {
      stop();
      throw std::runtime_error(binary + " wrote no port file within 10 s");
    }
  }
  ~BenchDaemon() { stop(); }
  BenchDaemon(const BenchDaemon&) = delete;
  BenchDaemon& operator=(const BenchDaemon&) = delete;

  // SIGTERM, then the exit status once it has exited (-1 when a signal ended it); the first
  // call's status again on later calls.
  int stop() {
    if (pid_ > 0) {
      ::kill(pid_, SIGTERM);
      int status = 0;
      ::waitpid(pid_, &status, 0);
      exit_status_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      pid_ = 0;
    }
    return exit_status_;
  }

  unsigned short port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  // Its user and system CPU time so far, in seconds (/proc/PID/stat, fields 14 and 15).
  double cpu_seconds() const {
    std::ifstream in(fmt::format("/proc/{}/stat", pid_));
    const std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::istringstream fields(stat.substr(stat.rfind(')') + 2));  // from field 3, the state
    std::string field;
    double ticks = 0;
    for (int i = 3; i <= 15 && fields >> field; ++i) {
      if (i >= 14) ticks += std::stod(field);
    }
    return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
  }

  long open_descriptors() const {
    std::error_code ec;
    long count = 0;
    for (std::filesystem::directory_iterator it(fmt::format("/proc/{}/fd", pid_), ec), end;
         !ec && it != end; it.increment(ec)) {
      ++count;
    }
    return count;
  }

  // "1024 (hard 524288)": its limit on open files, from /proc/PID/limits.
  std::string open_file_limit() const {
    std::ifstream in(fmt::format("/proc/{}/limits", pid_));
    const std::string name = "Max open files";
    for (std::string line; std::getline(in, line);) {
      if (line.rfind(name, 0) != 0) continue;
      std::istringstream fields(line.substr(name.size()));
      std::string soft, hard;
      fields >> soft >> hard;
      return fmt::format("{} (hard {})", soft, hard);
    }
    return "unknown";
  }

 private:
  pid_t pid_ = 0;
  unsigned short port_ = 0;
  int exit_status_ = -1;
};

// "CPU Intel(R) Xeon(R) ... x 2 cores, load average 0.52 0.31 0.20": where a figure came from.
inline std::string machine_line() {
  std::string load = "unknown";
  if (std::ifstream in("/proc/loadavg"); in) {
    std::string one, five, fifteen;
    in >> one >> five >> fifteen;
    load = one + " " + five + " " + fifteen;
  }
  const std::string cpu = nmt::cpu_model();
  return fmt::format("CPU {} x {} cores, load average {}", cpu.empty() ? "unknown" : cpu,
                     std::thread::hardware_concurrency(), load);
}

struct LatencySummary {
  std::size_t count = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0;  // 0 when count is 0
};

inline LatencySummary summarize(std::vector<double> ms) {
  LatencySummary s;
  s.count = ms.size();
  if (ms.empty()) return s;
  std::sort(ms.begin(), ms.end());
  const auto at = [&](double p) {
    return ms[static_cast<std::size_t>(p * static_cast<double>(ms.size() - 1))];
  };
  s.p50_ms = at(0.5);
  s.p99_ms = at(0.99);
  s.max_ms = ms.back();
  return s;
}

}  // namespace nmt::bench
