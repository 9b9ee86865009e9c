#pragma once
// Where training metrics go (loss, lr, grad norm, tokens/s, ms/step, validation figures). The
// trainer writes to this interface; the run directory's metrics.jsonl is one sink
// (trainer/train/metrics_sink.h), the experiment tracker's client another
// (tracking/run_tracking.h).

#include <cstdint>
#include <optional>
#include <string>

namespace nmt {

class MetricsSink {
 public:
  virtual ~MetricsSink() = default;
  virtual void log(const std::string& key, std::int64_t step, double value) = 0;
  // Called once per update, after its metrics: where they are written out.
  virtual void flush() {}
  // Why this sink cannot record what it was given (empty while it can): the trainer then stops
  // with a checkpoint rather than train on without a record.
  virtual std::string failure() const { return {}; }
};

// One line of metrics.jsonl as read back.
struct MetricRecord {
  std::string key;
  std::int64_t step = 0;
  std::optional<double> value;  // null: a non-finite value
  double time = 0.0;            // Unix seconds when it was logged
};

}  // namespace nmt
