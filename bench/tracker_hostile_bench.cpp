// nmt-trackerd under hostile loads (huge, nested or half-sent bodies, idle connections, long
// series), each against a fresh daemon on 127.0.0.1: its peak resident memory (VmHWM from /proc)
// under the load, and the latency of a healthy client (a fresh connection from 127.0.0.2 and GET
// /api/health; for the series load also a small metrics POST) during the load beside without it.
//
//   build/bench/tracker_hostile_bench [--seconds S] [--daemon PATH]

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "apps/tool_main.h"
#include "bench/tracker_bench_daemon.h"
#include "common/cli.h"
#include "common/proc_memory.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
const std::string kToken = "bench-token";

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

// A blocking socket with 10 s timeouts, connected from `source` to 127.0.0.1:port; -1 if refused.
int connect_from(unsigned short port, const char* source) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  sockaddr_in local{}, remote{};
  local.sin_family = remote.sin_family = AF_INET;
  ::inet_pton(AF_INET, source, &local.sin_addr);
  ::inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr);
  remote.sin_port = htons(port);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0 ||
      ::connect(fd, reinterpret_cast<sockaddr*>(&remote), sizeof remote) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool send_all(int fd, const std::string& bytes) {
  for (std::size_t sent = 0; sent < bytes.size();) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<std::size_t>(n);
  }
  return true;
}

// One request with Connection: close; the status (0 when there was no answer) and the body size.
std::pair<int, std::size_t> request(unsigned short port, const char* source,
                                    const std::string& head, const std::string& body = "") {
  const int fd = connect_from(port, source);
  if (fd < 0) return {0, 0};
  std::string answer;
  if (send_all(fd, head + body)) {
    char buffer[65536];
    for (ssize_t n; (n = ::recv(fd, buffer, sizeof buffer, 0)) > 0;) answer.append(buffer, n);
  }
  ::close(fd);
  const int status = answer.size() > 12 ? std::atoi(answer.c_str() + 9) : 0;
  const auto split = answer.find("\r\n\r\n");
  return {status, split == std::string::npos ? 0 : answer.size() - split - 4};
}

std::string head(const std::string& method, const std::string& target, std::size_t length,
                 bool token) {
  return fmt::format(
      "{} {} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n{}Content-Length: {}\r\n\r\n", method,
      target, token ? "Authorization: Bearer " + kToken + "\r\n" : "", length);
}

using Daemon = nmt::bench::BenchDaemon;

struct Figures {
  long peak_kb = 0;
  double p50_ms = 0, p99_ms = 0, max_ms = 0;
  int healthy = 0, healthy_failed = 0;
};

// One request of the healthy client; true when it was answered 200.
using HealthyRequest = std::function<bool(unsigned short port)>;

bool get_health(unsigned short port) {
  return request(port, "127.0.0.2", head("GET", "/api/health", 0, true)).first == 200;
}

// Runs `load` (given a stop flag) for `seconds` while a healthy client measures; `ready` runs
// before, untimed.
Figures measure(const Daemon& daemon, double seconds, const std::function<void()>& ready,
                const std::function<void(const std::atomic<bool>&)>& load,
                const HealthyRequest& healthy = get_health) {
  if (ready) ready();
  std::atomic<bool> stop{false};
  std::thread hostile;
  if (load) hostile = std::thread([&] { load(stop); });
  std::vector<double> latencies;
  Figures f;
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) {
    const auto t0 = Clock::now();
    if (healthy(daemon.port())) {
      latencies.push_back(ms_since(t0));
    } else {
      ++f.healthy_failed;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  f.peak_kb = nmt::proc_status_kb("VmHWM", daemon.pid());
  stop = true;
  if (hostile.joinable()) hostile.join();
  const auto latency = nmt::bench::summarize(std::move(latencies));
  f.healthy = static_cast<int>(latency.count);
  f.p50_ms = latency.p50_ms;
  f.p99_ms = latency.p99_ms;
  f.max_ms = latency.max_ms;
  return f;
}

// `threads` copies of `body` until stopped.
std::function<void(const std::atomic<bool>&)> repeat(int threads, std::function<void()> body) {
  return [threads, body](const std::atomic<bool>& stop) {
    std::vector<std::thread> pool;
    for (int i = 0; i < threads; ++i) {
      pool.emplace_back([&] {
        while (!stop) body();
      });
    }
    for (auto& t : pool) t.join();
  };
}

void print(const std::string& load, const Figures& f, const std::string& note = "") {
  std::cout << fmt::format(
      "{:<44} peak RSS {:>6.1f} MB | healthy p50 {:>6.2f} ms p99 {:>7.2f} ms max {:>7.2f} ms "
      "({} served, {} failed){}\n",
      load, static_cast<double>(f.peak_kb) / 1024.0, f.p50_ms, f.p99_ms, f.max_ms, f.healthy,
      f.healthy_failed, note.empty() ? "" : "  " + note);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nmt-trackerd's memory and a healthy client's latency under hostile loads",
               "tracker_hostile_bench"};
  double seconds = 3.0;
  std::string binary = NMT_TRACKERD;
  app.add_option("--seconds", seconds, "Seconds each load runs")->capture_default_str();
  app.add_option("--daemon", binary, "nmt-trackerd binary")->capture_default_str();
  return nmt::apps::run_bench(app, argc, argv, [&] {
    const fs::path dir = fs::temp_directory_path() / fmt::format("tracker_hostile_{}", ::getpid());
    fs::create_directories(dir);
    std::ofstream(dir / "token") << kToken << "\n";
    fs::permissions(dir / "token", fs::perms::owner_read | fs::perms::owner_write);
    const std::vector<std::string> flags = {"--log-level", "error", "--token-file",
                                            (dir / "token").string()};
    const auto fresh = [&] {
      return std::make_unique<Daemon>(binary, dir, (dir / "bench.db").string(), flags);
    };
    const std::string deep(16'000'000, '[');
    {
      auto d = fresh();
      print("no load", measure(*d, seconds, nullptr, nullptr));
    }
    {
      auto d = fresh();
      const auto port = d->port();
      print("4 clients x 16 MB bodies of '['", measure(*d, seconds, nullptr, repeat(4, [&] {
              request(port, "127.0.0.1", head("POST", "/api/runs", deep.size(), true), deep);
            })));
    }
    {
      // Half-sent: the header and 8 MB of a 16 MB body, then the connection is held open.
      auto d = fresh();
      const auto port = d->port();
      const std::string half(8'000'000, ' ');
      print(
          "20 unauthenticated half-sent 16 MB bodies",
          measure(*d, seconds, nullptr, [&](auto& stop) {
            std::vector<int> fds;
            for (int i = 0; i < 20; ++i) {
              const int fd = connect_from(port, "127.0.0.1");
              if (fd >= 0 && send_all(fd, head("POST", "/api/runs/1/metrics", 16'000'000, false))) {
                send_all(fd, half);
              }
              fds.push_back(fd);
            }
            while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(10));
            for (int fd : fds) ::close(fd);
          }));
    }
    {
      auto d = fresh();
      const auto port = d->port();
      std::vector<int> fds;
      const auto figures = measure(
          *d, seconds,
          [&] {
            for (int i = 0; i < 520; ++i) fds.push_back(connect_from(port, "127.0.0.1"));
          },
          nullptr);
      print("520 idle connections from 127.0.0.1", figures);
      for (int fd : fds) ::close(fd);
    }
    {
      // Declared over the 16 MiB default limit, then streamed regardless.
      auto d = fresh();
      const auto port = d->port();
      const std::string chunk(1 << 20, ' ');
      print("4 clients streaming 64 MB bodies", measure(*d, seconds, nullptr, repeat(4, [&] {
              const int fd = connect_from(port, "127.0.0.1");
              if (fd < 0) return;
              send_all(fd, head("POST", "/api/runs", 64u << 20, true));
              for (int i = 0; i < 64 && send_all(fd, chunk); ++i) {
              }
              ::close(fd);
            })));
    }
    {
      // A 1M-point series, stored untimed; the peak is measured for the queries alone.
      auto d = fresh();
      const auto port = d->port();
      const std::string run_body = R"({"experiment":"bench","name":"series"})";
      request(port, "127.0.0.1", head("POST", "/api/runs", run_body.size(), true), run_body);
      std::size_t answer = 0;
      const auto ingest = [&] {
        for (int batch = 0; batch < 100; ++batch) {
          nlohmann::json points = nlohmann::json::array();
          for (int i = 0; i < 10000; ++i) {
            points.push_back(
                {{"key", "loss"}, {"step", batch * 10000 + i}, {"value", 1.0 / (i + 1)}});
          }
          const std::string body =
              nlohmann::json{{"rank", 0}, {"sequence", batch}, {"points", points}}.dump();
          request(port, "127.0.0.1", head("POST", "/api/runs/1/metrics", body.size(), true), body);
        }
        std::ofstream(fmt::format("/proc/{}/clear_refs", d->pid())) << "5";  // resets VmHWM
      };
      const auto readers = repeat(2, [&] {
        answer =
            request(port, "127.0.0.1", head("GET", "/api/runs/1/metrics?key=loss", 0, true)).second;
      });
      const auto figures = measure(*d, seconds, ingest, readers);
      print("2 clients reading a 1M-point series", figures,
            fmt::format("(answer {} bytes)", answer));
      // The healthy client is a training run posting a small metrics batch (a new sequence each).
      int sequence = 0;
      const auto post_metrics = [&](unsigned short to) {
        const std::string body =
            nlohmann::json{
                {"rank", 1},
                {"sequence", sequence++},
                {"points", {{{"key", "train/loss"}, {"step", sequence}, {"value", 1.5}}}}}
                .dump();
        return request(to, "127.0.0.2", head("POST", "/api/runs/1/metrics", body.size(), true),
                       body)
                   .first == 200;
      };
      print("the same, the healthy client ingesting",
            measure(*d, seconds, {}, readers, post_metrics));
    }
    fs::remove_all(dir);
    return 0;
  });
}
