#pragma once
// Progress of long work as periodic log lines with count, rate and ETA, e.g.
//   encode train: 1,250,000 pairs, 41,230 pairs/s, 27.8% done, ETA 0:01:52
// Lines go through the one logger, so they interleave correctly with everything else and land in
// --log-file too. Cheap enough to call per item: it looks at the clock, nothing more.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace nmt {

class ProgressMeter {
 public:
  explicit ProgressMeter(std::string label, std::string unit = "lines",
                         double interval_seconds = 5.0);

  // `count`: units done so far. `fraction`: share of the whole job done, in [0, 1], or negative
  // when unknown (then no percentage or ETA is shown).
  void update(std::int64_t count, double fraction = -1.0);
  // Work resumed part-way: `count` units (and `fraction` of the job) were done before this meter
  // started, so rates and the ETA count only what is done from here.
  void start_at(std::int64_t count, double fraction);
  // Logs the final count, elapsed time and mean rate (of the units done since the start). Returns
  // the elapsed seconds.
  double finish(std::int64_t count);

 private:
  void log_line(std::int64_t count, double fraction, double elapsed) const;

  std::string label_;
  std::string unit_;
  std::chrono::duration<double> interval_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
  std::int64_t start_count_ = 0;
  double start_fraction_ = 0.0;
};

// For long steps inside a library that reports no progress of its own (SentencePiece training):
// logs "<label>: running for 1:30" every interval until destroyed, from a background thread.
class Heartbeat {
 public:
  explicit Heartbeat(std::string label, double interval_seconds = 30.0);
  ~Heartbeat();
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable stop_;
  bool stopping_ = false;
  std::thread thread_;
};

// "1,234,567"
std::string with_thousands(std::int64_t value);
// "0.42" below 10, else "12,345"
std::string format_rate(double per_second);
// "1:02:03" (or "0:05" under an hour)
std::string format_duration(double seconds);

}  // namespace nmt
