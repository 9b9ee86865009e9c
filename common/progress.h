#pragma once
// Progress of long work as periodic log lines with count, rate and ETA, e.g.
//   encode train: 1,250,000 pairs, 41,230 pairs/s, 27.8% done, ETA 0:01:52
// Lines go through the one logger, so they interleave correctly with everything else and land in
// --log-file too. Cheap enough to call per item: it looks at the clock, nothing more.

#include <chrono>
#include <cstdint>
#include <string>

namespace nmt {

class ProgressMeter {
 public:
  explicit ProgressMeter(std::string label, std::string unit = "lines",
                         double interval_seconds = 5.0);

  // `count`: units done so far. `fraction`: share of the whole job done, in [0, 1], or negative
  // when unknown (then no percentage or ETA is shown).
  void update(std::int64_t count, double fraction = -1.0);
  // Logs the final count, elapsed time and mean rate. Returns the elapsed seconds.
  double finish(std::int64_t count);

 private:
  void log_line(std::int64_t count, double fraction, double elapsed) const;

  std::string label_;
  std::string unit_;
  std::chrono::duration<double> interval_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_;
};

// "1,234,567"
std::string with_thousands(std::int64_t value);
// "1:02:03" (or "0:05" under an hour)
std::string format_duration(double seconds);

}  // namespace nmt
