#pragma once
// Concurrent ingest into a real nmt-trackerd for the backup test: writers posting metric batches to
// runs of their own and a registrar registering runs, each on a connection of its own, recording
// what the daemon acknowledged, so that a copy can be held to everything acknowledged before it.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "tests/tracker_daemon_harness.h"

namespace nmt::testing {

using namespace std::chrono_literals;
inline constexpr int kPointsPerBatch = 40;

// The value of a point: exact in a double, different for every run and step.
inline double point_value(std::int64_t run, std::int64_t step) {
  return static_cast<double>(run) * 100000.0 + static_cast<double>(step) * 0.5;
}

inline std::string writer_key(int rank) {
  return "w" + std::to_string(rank) + "/loss";
}

// Batch `sequence` of writer `rank`: steps sequence * kPointsPerBatch onwards, under its own key.
inline nlohmann::json writer_batch(std::int64_t run, int rank, int sequence) {
  nlohmann::json points = nlohmann::json::array();
  for (int i = 0; i < kPointsPerBatch; ++i) {
    const std::int64_t step = std::int64_t{sequence} * kPointsPerBatch + i;
    points.push_back(
        {{"key", writer_key(rank)}, {"step", step}, {"value", point_value(run, step)}});
  }
  return {{"rank", rank}, {"sequence", sequence}, {"points", points}};
}

inline std::int64_t register_run(Connection& c, const std::string& name) {
  const auto reply = c.post(
      "/api/runs", {{"experiment", "backup"}, {"name", name}, {"uid", "backup-test-" + name}});
  if (reply.status != 200) throw std::runtime_error("registration refused: " + reply.body);
  return reply.json().at("run_id").get<std::int64_t>();
}

// What the writers had acknowledged: batches by (run, rank) and runs.
struct Acknowledged {
  std::map<std::pair<std::int64_t, int>, std::set<int>> batches;
  std::set<std::int64_t> runs;
  std::size_t batch_count() const {
    std::size_t n = 0;
    for (const auto& [writer, sequences] : batches) n += sequences.size();
    return n;
  }
};

// Writers posting metric batches to runs of their own and a registrar registering runs, each on a
// connection of its own, recording what the daemon acknowledged (200) once it did.
class Ingest {
 public:
  Ingest(unsigned short port, int writers) {
    Connection c(port);
    for (int rank = 0; rank < writers; ++rank) {
      runs_.push_back(register_run(c, "writer" + std::to_string(rank)));
      acknowledge_run(runs_.back());
    }
    for (int rank = 0; rank < writers; ++rank) {
      threads_.emplace_back([this, port, rank] { write(port, rank); });
    }
    threads_.emplace_back([this, port] { register_runs(port); });
  }
  ~Ingest() { stop(); }

  void stop() {
    stop_ = true;
    for (auto& t : threads_) {
      if (t.joinable()) t.join();
    }
  }
  Acknowledged acknowledged() {
    std::lock_guard lock(mutex_);
    return acknowledged_;
  }
  // Waits until `count` more batches than `since` are acknowledged; false after 60 s.
  bool wait_for_batches(std::size_t since, std::size_t count) {
    for (int i = 0; i < 6000 && acknowledged().batch_count() < since + count; ++i) {
      std::this_thread::sleep_for(10ms);
    }
    return acknowledged().batch_count() >= since + count;
  }
  const std::vector<std::int64_t>& writer_runs() const { return runs_; }
  // Each thread waits this long after each write it makes.
  void set_pace(std::chrono::milliseconds pace) { pace_ = pace.count(); }
  std::string failure() {
    std::lock_guard lock(mutex_);
    return failure_;
  }

 private:
  void write(unsigned short port, int rank) {
    try {
      Connection c(port);
      const std::int64_t run = runs_[static_cast<std::size_t>(rank)];
      const std::string path = "/api/runs/" + std::to_string(run) + "/metrics";
      for (int sequence = 0; !stop_; ++sequence) {
        const auto reply = c.post(path, writer_batch(run, rank, sequence));
        if (reply.status != 200) throw std::runtime_error("batch refused: " + reply.body);
        {
          std::lock_guard lock(mutex_);
          acknowledged_.batches[{run, rank}].insert(sequence);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(pace_.load()));
      }
    } catch (const std::exception& e) {
      std::lock_guard lock(mutex_);
      failure_ += e.what();
    }
  }
  void register_runs(unsigned short port) {
    try {
      Connection c(port);
      for (int i = 0; i < 500 && !stop_; ++i) {
        acknowledge_run(register_run(c, "registered" + std::to_string(i)));
        std::this_thread::sleep_for(std::chrono::milliseconds(pace_.load()) + 5ms);
      }
    } catch (const std::exception& e) {
      std::lock_guard lock(mutex_);
      failure_ += e.what();
    }
  }
  void acknowledge_run(std::int64_t run) {
    std::lock_guard lock(mutex_);
    acknowledged_.runs.insert(run);
  }

  std::vector<std::int64_t> runs_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false};
  std::atomic<std::int64_t> pace_{0};  // ms
  std::mutex mutex_;
  Acknowledged acknowledged_;
  std::string failure_;
};

}  // namespace nmt::testing
