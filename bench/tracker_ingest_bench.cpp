// Metric ingestion through nmt-trackerd against the ceiling of this machine: raw batched SQLite
// inserts into the same schema, in the same run. Starts a real daemon on 127.0.0.1, sends
// batches of points from C client threads over keep-alive HTTP, and reports points/s, the ratio
// to the raw rate, and request latency p50/p99. With --baseline-daemon (another build, e.g. the
// one before the issue-17 limits), both daemons run in turns, --rounds each, side by side.
//
//   build/bench/tracker_ingest_bench [--points N] [--batch B] [--clients C]
//                                    [--baseline-daemon PATH] [--rounds R]

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "apps/tool_main.h"
#include "bench/tracker_bench_daemon.h"
#include "common/cli.h"
#include "tracker/client/http_client.h"
#include "tracker/store/database.h"

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

struct Options {
  std::int64_t points = 400000;
  std::int64_t batch = 1000;
  int clients = 4;
  int rounds = 1;  // runs per daemon, alternating between them
};

struct DaemonRun {
  double points_per_second = 0;
  double p50_ms = 0, p99_ms = 0;
  std::size_t requests = 0;
  int exit_status = -1;
};

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// The ceiling: one prepared INSERT, one transaction per batch, straight into SQLite (WAL).
double raw_points_per_second(const fs::path& dir, const Options& o) {
  nmt::tracker::Database db((dir / "raw.db").string());
  auto& sql = db.sqlite();
  sql.exec("INSERT INTO experiments(name, created_at) VALUES ('bench', 0)");
  sql.exec("INSERT INTO runs(experiment_id, name, started_at) VALUES (1, 'raw', 0)");
  SQLite::Statement insert(
      sql,
      "INSERT INTO metrics(run_id, key, step, value, wall_time, rank) VALUES (1, ?, ?, ?, ?, 0)");
  const auto start = Clock::now();
  for (std::int64_t done = 0; done < o.points; done += o.batch) {
    SQLite::Transaction tx(sql);
    for (std::int64_t i = done; i < std::min(o.points, done + o.batch); ++i) {
      insert.bind(1, "train/loss");
      insert.bind(2, static_cast<std::int64_t>(i));
      insert.bind(3, 1.0 / static_cast<double>(i + 1));
      insert.bind(4, 1.7e9);
      insert.exec();
      insert.reset();
    }
    tx.commit();
  }
  return static_cast<double>(o.points) / seconds_since(start);
}

// The daemon's database, empty.
std::string fresh_database(const fs::path& dir) {
  const std::string db = (dir / "daemon.db").string();
  fs::remove(db);
  fs::remove(db + "-wal");
  fs::remove(db + "-shm");
  return db;
}

std::string batch_body(int client, std::int64_t sequence, std::int64_t first, std::int64_t count) {
  nlohmann::json points = nlohmann::json::array();
  for (std::int64_t i = first; i < first + count; ++i) {
    points.push_back({{"key", "train/loss"},
                      {"step", i},
                      {"value", 1.0 / static_cast<double>(i + 1)},
                      {"time", 1.7e9}});
  }
  return nlohmann::json{{"rank", client}, {"sequence", sequence}, {"points", points}}.dump();
}

// One fresh daemon, one run id, `o.points` points from `o.clients` keep-alive clients.
DaemonRun ingest_through(const std::string& daemon, const fs::path& dir, const Options& o) {
  nmt::bench::BenchDaemon process(daemon, dir, fresh_database(dir), {"--log-level", "warn"});
  const auto url = nmt::tracker::parse_url(process.url());
  nmt::tracker::HttpClient setup(url, "", std::chrono::seconds(10));
  const auto run = nlohmann::json::parse(
      setup.request("POST", "/api/runs", R"({"experiment":"bench","name":"ingest"})").body);
  const std::string target = fmt::format("/api/runs/{}/metrics", run["run_id"].get<std::int64_t>());
  // Bodies are built before timing: the clock measures the daemon, not the benchmark's JSON.
  const std::int64_t batches = o.points / o.batch;
  std::vector<std::string> bodies(static_cast<std::size_t>(batches));
  for (std::int64_t b = 0; b < batches; ++b) {
    bodies[static_cast<std::size_t>(b)] =
        batch_body(static_cast<int>(b % o.clients), b, b * o.batch, o.batch);
  }
  std::vector<std::vector<double>> latencies(static_cast<std::size_t>(o.clients));
  const auto start = Clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < o.clients; ++c) {
    threads.emplace_back([&, c] {
      nmt::tracker::HttpClient client(url, "", std::chrono::seconds(30));
      for (std::int64_t b = c; b < batches; b += o.clients) {
        const auto t0 = Clock::now();
        const auto response = client.request("POST", target, bodies[static_cast<std::size_t>(b)]);
        if (response.status != 200) throw std::runtime_error("ingest failed: " + response.body);
        latencies[static_cast<std::size_t>(c)].push_back(1000.0 * seconds_since(t0));
      }
    });
  }
  for (auto& t : threads) t.join();
  DaemonRun result;
  result.points_per_second = static_cast<double>(batches * o.batch) / seconds_since(start);
  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  const auto latency = nmt::bench::summarize(std::move(all));
  result.p50_ms = latency.p50_ms;
  result.p99_ms = latency.p99_ms;
  result.requests = latency.count;
  result.exit_status = process.stop();
  return result;
}

void report(const std::string& label, const std::vector<DaemonRun>& runs, double raw,
            const Options& o) {
  std::vector<double> rates;
  for (const auto& r : runs) rates.push_back(r.points_per_second);
  std::sort(rates.begin(), rates.end());
  const double median = rates[rates.size() / 2];
  const DaemonRun& last = runs.back();
  std::cout << fmt::format(
      "{} ({} clients, HTTP): {:>10.0f} points/s median of {} ({:.0f}% of raw; runs {:.0f}..{:.0f})"
      "\n  request latency (last run): p50 {:.2f} ms, p99 {:.2f} ms ({} requests of {} points); "
      "exit status after SIGTERM: {}\n",
      label, o.clients, median, runs.size(), 100.0 * median / raw, rates.front(), rates.back(),
      last.p50_ms, last.p99_ms, last.requests, o.batch, last.exit_status);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Points/s through nmt-trackerd vs raw batched SQLite inserts",
               "tracker_ingest_bench"};
  Options o;
  std::string daemon = NMT_TRACKERD;
  std::string baseline;
  app.add_option("--points", o.points, "Points in total")->capture_default_str();
  app.add_option("--batch", o.batch, "Points per request / transaction")->capture_default_str();
  app.add_option("--clients", o.clients, "Concurrent HTTP clients")->capture_default_str();
  app.add_option("--daemon", daemon, "nmt-trackerd binary")->capture_default_str();
  app.add_option("--baseline-daemon", baseline,
                 "A second nmt-trackerd binary (e.g. an earlier build) run in turns with --daemon");
  app.add_option("--rounds", o.rounds, "Runs per daemon")->capture_default_str();
  return nmt::apps::run_bench(app, argc, argv, [&] {
    const fs::path dir = fs::temp_directory_path() / fmt::format("tracker_bench_{}", ::getpid());
    fs::create_directories(dir);
    const double raw = raw_points_per_second(dir, o);
    std::vector<DaemonRun> runs, baseline_runs;
    for (int round = 0; round < std::max(o.rounds, 1); ++round) {
      runs.push_back(ingest_through(daemon, dir, o));
      if (!baseline.empty()) baseline_runs.push_back(ingest_through(baseline, dir, o));
    }
    std::cout << fmt::format("raw SQLite (batches of {}):      {:>12.0f} points/s\n", o.batch, raw);
    report("nmt-trackerd " + daemon, runs, raw, o);
    if (!baseline.empty()) report("baseline     " + baseline, baseline_runs, raw, o);
    fs::remove_all(dir);
    return 0;
  });
}
