// Many ranks, one daemon: the 1,024 ranks of a 128-node job (8 to a node, each node a loopback
// address of its own, 127.0.1.1 to 127.0.1.128) reporting to one nmt-trackerd started with its
// default flags. Rank 0 registers the run; then every rank, each --interval seconds for
// --duration seconds, posts a metric batch (its own keys, --steps steps each) and a heartbeat,
// over a keep-alive connection of its own bound to its node's address (HttpClient's local
// address), one thread a rank. At the end every acknowledged point is read back through the API
// and compared (exit 1 when one is missing or differs); the report gives the requests refused or
// failed by cause, the latency of each route, the daemon's memory, descriptors and CPU time, and
// what the benchmark itself cost.
//
//   build/bench/tracker_ranks_bench [--ranks 1024] [--ranks-per-node 8] [--interval 5]
//                                   [--duration 180] [--steps 5] [--keys 2] [--spread 0]

#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "apps/tool_main.h"
#include "bench/tracker_bench_daemon.h"
#include "common/cli.h"
#include "common/open_file_limit.h"
#include "common/proc_memory.h"
#include "tracker/api/routes.h"
#include "tracker/api/wire_json.h"
#include "tracker/client/http_client.h"
#include "tracker/client/tracker_reader.h"

namespace {

namespace fs = std::filesystem;
namespace api = nmt::tracker::api;
using Clock = std::chrono::steady_clock;
using nmt::tracker::HttpClient;

const char* const kKeyNames[] = {"loss",    "tokens_per_s", "grad_norm", "learning_rate",
                                 "step_ms", "memory_gb",    "data_ms",   "allreduce_ms"};
constexpr int kMaxKeys = static_cast<int>(std::size(kKeyNames));
// What each rank holds in this process: its socket, and its client's event loop (epoll, eventfd,
// timerfd).
constexpr std::uint64_t kDescriptorsPerRank = 4;

struct Options {
  int ranks = 1024;
  int ranks_per_node = 8;
  double interval_s = 5;
  double duration_s = 180;
  int steps = 5;        // steps of each key in a batch
  int keys = 2;         // metric keys of each rank
  double spread_s = 0;  // rank r starts r / ranks of this later; 0: every rank at once
  std::string daemon = NMT_TRACKERD;

  int rounds() const { return std::max(1, static_cast<int>(duration_s / interval_s)); }
  int nodes() const { return (ranks + ranks_per_node - 1) / ranks_per_node; }
};

// Node n's address; 127.0.0.1 stays the daemon's and the reader's.
std::string node_address(int node) {
  return fmt::format("127.0.{}.{}", 1 + node / 250, 1 + node % 250);
}

std::string key_of(int rank, int key) {
  return fmt::format("rank{:04}/{}", rank, kKeyNames[key]);
}

// The value sent at a step: any double comes back bit for bit.
double value_of(int rank, int key, std::int64_t step) {
  return rank + 0.125 * key + 1.0 / static_cast<double>(step + 1);
}

// What one rank did, kept per rank (no locks), merged at the end.
struct RankTally {
  std::unique_ptr<HttpClient> client;            // open until the end's figures are read
  std::vector<int> acked_rounds;                 // rounds whose batch was answered 200
  std::vector<double> metric_ms, heartbeat_ms;   // requests answered 200
  std::map<std::string, std::int64_t> failures;  // by route and cause
};

// A failed request's cause: the status (a 503 with the cap it names), or that none came.
std::string cause_of(const nmt::tracker::HttpResponse& answer) {
  if (answer.status == 503) {
    for (const char* cap : {"--max-connections-per-client", "--max-connections"}) {
      if (answer.body.find(std::string(cap) + ")") != std::string::npos) {
        return fmt::format("HTTP 503 ({})", cap);
      }
    }
  }
  return fmt::format("HTTP {}", answer.status);
}

// Sends one request, timing it; a failure is counted under `route` and its cause.
bool send(RankTally& tally, const char* route, std::vector<double>& latencies,
          const std::string& target, const std::string& body) {
  const auto start = Clock::now();
  try {
    const auto answer = tally.client->request("POST", target, body);
    if (answer.status == 200) {
      latencies.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
      return true;
    }
    ++tally.failures[fmt::format("{}: {}", route, cause_of(answer))];
  } catch (const nmt::tracker::HttpError& e) {
    const std::string what = e.what();
    const auto reason = what.find("failed: ");
    ++tally.failures[fmt::format("{}: no answer ({})", route,
                                 reason == std::string::npos ? what : what.substr(reason + 8))];
  }
  return false;
}

std::string batch_body(const Options& o, int rank, int round) {
  api::MetricBatch batch{rank, round, {}};
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  for (int key = 0; key < o.keys; ++key) {
    for (std::int64_t step = std::int64_t{round} * o.steps; step < (round + 1) * o.steps; ++step) {
      batch.points.push_back({key_of(rank, key), step, value_of(rank, key, step), now});
    }
  }
  return nlohmann::json(batch).dump();
}

struct Start {
  std::int64_t run_id = 0;
  Clock::time_point at;  // round 0 of rank 0
};

// Rank 0 registers the run and says when round 0 is, for every rank.
Start register_run(HttpClient& client, const Options& o) {
  api::RunRegistration run;
  run.experiment = "ranks_bench";
  run.name = fmt::format("{} ranks", o.ranks);
  run.world_size = o.ranks;
  const auto answer =
      client.request("POST", api::route_path(api::RouteId::kCreateRun), nlohmann::json(run).dump());
  if (answer.status != 200) {
    throw std::runtime_error(
        fmt::format("rank 0 could not register the run: HTTP {} {}", answer.status, answer.body));
  }
  // A second for every thread to be waiting.
  return {api::parse<api::RunCreated>(nlohmann::json::parse(answer.body)).run_id,
          Clock::now() + std::chrono::seconds(1)};
}

void run_rank(const Options& o, int rank, const std::string& url, std::promise<Start>* registered,
              std::shared_future<Start> start, RankTally& tally) {
  tally.client =
      std::make_unique<HttpClient>(nmt::tracker::parse_url(url), "", std::chrono::seconds(30));
  tally.client->set_local_address(node_address(rank / o.ranks_per_node));
  if (registered) {
    try {
      registered->set_value(register_run(*tally.client, o));
    } catch (...) {
      registered->set_exception(std::current_exception());
      return;
    }
  }
  Start s;
  try {
    s = start.get();
  } catch (const std::exception&) {
    return;  // rank 0 reports it
  }
  const std::string run = std::to_string(s.run_id);
  const std::string metrics = api::route_path(api::RouteId::kIngestMetrics, {run});
  const std::string heartbeat = api::route_path(api::RouteId::kHeartbeat, {run});
  const std::string beat = nlohmann::json(api::Heartbeat{1, rank}).dump();
  const auto first = s.at + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(o.spread_s * rank / o.ranks));
  for (int round = 0; round < o.rounds(); ++round) {
    std::this_thread::sleep_until(first + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(round * o.interval_s)));
    if (send(tally, "metrics", tally.metric_ms, metrics, batch_body(o, rank, round))) {
      tally.acked_rounds.push_back(round);
    }
    send(tally, "heartbeat", tally.heartbeat_ms, heartbeat, beat);
  }
}

// The daemon's log lines at warning level or worse.
std::vector<std::string> warnings_in(const fs::path& log) {
  std::vector<std::string> lines;
  std::ifstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find("[warning]") != std::string::npos || line.find("[error]") != std::string::npos) {
      lines.push_back(line);
    }
  }
  return lines;
}

struct Stored {
  std::int64_t acked = 0, found = 0, missing = 0, differing = 0, unacked = 0;
};

// Every acknowledged point read back, a series at a time, in pages (never downsampled).
Stored read_back(const std::string& url, std::int64_t run_id, const Options& o,
                 const std::vector<RankTally>& tallies) {
  nmt::tracker::TrackerReader reader{nmt::tracker::DaemonAddress(url)};
  Stored s;
  for (int rank = 0; rank < o.ranks; ++rank) {
    for (int key = 0; key < o.keys; ++key) {
      std::map<std::int64_t, api::SeriesPoint> stored;
      for (const auto& point : reader.all_points(run_id, key_of(rank, key))) {
        stored.emplace(point.step, point);
      }
      for (const int round : tallies[static_cast<std::size_t>(rank)].acked_rounds) {
        for (std::int64_t step = std::int64_t{round} * o.steps; step < (round + 1) * o.steps;
             ++step) {
          ++s.acked;
          const auto it = stored.find(step);
          if (it == stored.end()) {
            ++s.missing;
            continue;
          }
          ++s.found;
          const bool same = it->second.value == value_of(rank, key, step) &&
                            it->second.rank == std::optional<std::int64_t>(rank);
          s.differing += same ? 0 : 1;
          stored.erase(it);
        }
      }
      s.unacked += static_cast<std::int64_t>(stored.size());
    }
  }
  return s;
}

nmt::bench::LatencySummary latency_of(const std::vector<RankTally>& tallies,
                                      std::vector<double> RankTally::*route) {
  std::vector<double> all;
  for (const auto& t : tallies) all.insert(all.end(), (t.*route).begin(), (t.*route).end());
  return nmt::bench::summarize(std::move(all));
}

std::string latency_text(const nmt::bench::LatencySummary& l) {
  return fmt::format("latency p50 {:.2f} ms, p99 {:.2f} ms, max {:.1f} ms", l.p50_ms, l.p99_ms,
                     l.max_ms);
}

double process_cpu_seconds() {
  rusage usage{};
  ::getrusage(RUSAGE_SELF, &usage);
  const auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// Samples the daemon's open descriptors once a second until stopped; the most seen.
long watch_descriptors(const nmt::bench::BenchDaemon& daemon, const std::atomic<bool>& stop) {
  long most = 0;
  while (!stop) {
    most = std::max(most, daemon.open_descriptors());
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  return most;
}

void check(const Options& o) {
  if (o.ranks < 1 || o.ranks_per_node < 1 || o.interval_s <= 0 || o.duration_s <= 0 ||
      o.steps < 1 || o.spread_s < 0) {
    throw nmt::UsageError(
        "--ranks, --ranks-per-node, --interval, --duration and --steps must be "
        "positive, --spread not negative");
  }
  if (o.keys < 1 || o.keys > kMaxKeys) {
    throw nmt::UsageError(fmt::format("--keys must be from 1 to {}", kMaxKeys));
  }
  const auto files = nmt::raise_open_file_limit();
  const std::uint64_t needed = kDescriptorsPerRank * static_cast<std::uint64_t>(o.ranks) + 64;
  if (files.soft < needed) {
    throw std::runtime_error(fmt::format(
        "{} ranks need about {} open files here, and this process may open {} (hard limit {}): "
        "fewer --ranks, or raise the limit (ulimit -Hn)",
        o.ranks, needed, files.soft, files.hard));
  }
}

// The daemon and this process while the ranks ran, read before their connections close.
struct LoadFigures {
  double seconds = 0;
  double daemon_cpu_s = 0, own_cpu_s = 0;
  long peak_kb = 0, rss_kb = 0;  // the daemon's VmHWM and VmRSS
  long descriptors = 0, most_descriptors = 0;
};

// Runs every rank to its last round; their connections stay open in `tallies`.
LoadFigures run_ranks(const Options& o, const nmt::bench::BenchDaemon& daemon,
                      std::vector<RankTally>& tallies, std::shared_future<Start>& start) {
  std::promise<Start> registered;
  start = registered.get_future().share();
  std::atomic<bool> stop{false};
  std::future<long> most =
      std::async(std::launch::async, watch_descriptors, std::cref(daemon), std::cref(stop));
  LoadFigures f;
  f.daemon_cpu_s = -daemon.cpu_seconds();
  f.own_cpu_s = -process_cpu_seconds();
  const auto began = Clock::now();
  {
    std::vector<std::thread> ranks;
    for (int r = 0; r < o.ranks; ++r) {
      ranks.emplace_back(run_rank, std::cref(o), r, daemon.url(), r == 0 ? &registered : nullptr,
                         start, std::ref(tallies[static_cast<std::size_t>(r)]));
    }
    for (auto& t : ranks) t.join();
  }
  f.seconds = std::chrono::duration<double>(Clock::now() - began).count();
  f.daemon_cpu_s += daemon.cpu_seconds();
  f.own_cpu_s += process_cpu_seconds();
  f.peak_kb = nmt::proc_status_kb("VmHWM", daemon.pid());
  f.rss_kb = nmt::proc_status_kb("VmRSS", daemon.pid());
  f.descriptors = daemon.open_descriptors();
  stop = true;
  f.most_descriptors = std::max(f.descriptors, most.get());
  return f;
}

void report_load(const Options& o, const std::vector<RankTally>& tallies, const LoadFigures& f) {
  std::map<std::string, std::int64_t> failures;
  std::int64_t batches = 0;
  for (const auto& t : tallies) {
    batches += static_cast<std::int64_t>(t.acked_rounds.size());
    for (const auto& [cause, count] : t.failures) failures[cause] += count;
  }
  const std::int64_t sent = std::int64_t{o.ranks} * o.rounds();
  const auto beats = latency_of(tallies, &RankTally::heartbeat_ms);
  std::cout << fmt::format("metrics:    {} of {} batches acknowledged ({} points); {}\n", batches,
                           sent, batches * o.keys * o.steps,
                           latency_text(latency_of(tallies, &RankTally::metric_ms)))
            << fmt::format("heartbeats: {} of {} acknowledged; {}\n", beats.count, sent,
                           latency_text(beats))
            << "refused or failed:" << (failures.empty() ? " none" : "") << "\n";
  for (const auto& [cause, count] : failures) std::cout << fmt::format("  {}: {}\n", cause, count);
  std::cout << fmt::format(
      "daemon: peak RSS (VmHWM) {:.1f} MB, RSS at the end {:.1f} MB, open descriptors {} at the "
      "end ({} at most), CPU {:.2f} s in {:.0f} s ({:.1f}% of a core)\n",
      f.peak_kb / 1024.0, f.rss_kb / 1024.0, f.descriptors, f.most_descriptors, f.daemon_cpu_s,
      f.seconds, 100.0 * f.daemon_cpu_s / f.seconds);
  std::cout << fmt::format(
      "benchmark itself: {} threads, peak RSS {:.1f} MB, CPU {:.2f} s ({:.1f}% of a core)\n",
      o.ranks + 2, nmt::proc_status_kb("VmHWM") / 1024.0, f.own_cpu_s,
      100.0 * f.own_cpu_s / f.seconds);
}

int bench(const Options& o) {
  check(o);
  const fs::path dir = fs::temp_directory_path() / fmt::format("tracker_ranks_{}", ::getpid());
  fs::create_directories(dir);
  std::cout << "tracker_ranks_bench: " << nmt::bench::machine_line() << " (at the start)\n";
  nmt::bench::BenchDaemon daemon(o.daemon, dir, (dir / "tracker.db").string(), {},
                                 (dir / "daemon.log").string());
  std::cout
      << fmt::format(
             "nmt-trackerd {} with its default flags, open files {}\n{} ranks on {} addresses ({} "
             "to "
             "{}, {} each), every {} s for {} s ({} rounds, spread {} s): a batch of {} keys x {} "
             "steps and a heartbeat each\n",
             o.daemon, daemon.open_file_limit(), o.ranks, o.nodes(), node_address(0),
             node_address(o.nodes() - 1), o.ranks_per_node, o.interval_s, o.duration_s, o.rounds(),
             o.spread_s, o.keys, o.steps)
      << std::flush;
  std::vector<RankTally> tallies(static_cast<std::size_t>(o.ranks));
  std::shared_future<Start> start;
  const LoadFigures figures = run_ranks(o, daemon, tallies, start);
  const std::int64_t run_id = start.get().run_id;  // rethrows rank 0's failure
  report_load(o, tallies, figures);
  for (auto& t : tallies) t.client.reset();  // the reader's connection must not be refused
  const Stored stored = read_back(daemon.url(), run_id, o, tallies);
  std::cout << fmt::format(
      "read back (GET {} of {} series, in pages): {} of {} acknowledged points stored, {} "
      "missing, {} differing; {} stored unacknowledged\n",
      api::route_path(api::RouteId::kMetricSeries, {std::to_string(run_id)}), o.ranks * o.keys,
      stored.found, stored.acked, stored.missing, stored.differing, stored.unacked);
  std::cout << fmt::format("daemon exit status after SIGTERM: {}; {} (at the end)\n", daemon.stop(),
                           nmt::bench::machine_line());
  const auto warnings = warnings_in(dir / "daemon.log");
  std::cout << fmt::format("daemon log: {} warnings or errors\n", warnings.size());
  for (std::size_t i = 0; i < std::min<std::size_t>(warnings.size(), 5); ++i) {
    std::cout << "  " << warnings[i] << "\n";
  }
  fs::remove_all(dir);
  return stored.missing == 0 && stored.differing == 0 && stored.acked > 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"1,024 ranks of a 128-node job reporting to one nmt-trackerd at its defaults",
               "tracker_ranks_bench"};
  Options o;
  app.add_option("--ranks", o.ranks, "Simulated ranks, one connection and thread each")
      ->capture_default_str();
  app.add_option("--ranks-per-node", o.ranks_per_node, "Ranks sharing a node's address")
      ->capture_default_str();
  app.add_option("--interval", o.interval_s, "Seconds between a rank's batches")
      ->capture_default_str();
  app.add_option("--duration", o.duration_s, "Seconds of load")->capture_default_str();
  app.add_option("--steps", o.steps, "Steps of each key in a batch")->capture_default_str();
  app.add_option("--keys", o.keys, "Metric keys of each rank")->capture_default_str();
  app.add_option("--spread", o.spread_s,
                 "Seconds over which the ranks' rounds are staggered; 0: all at once")
      ->capture_default_str();
  app.add_option("--daemon", o.daemon, "nmt-trackerd binary")->capture_default_str();
  return nmt::apps::run_bench(app, argc, argv, [&] { return bench(o); });
}
