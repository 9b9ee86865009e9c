#pragma once
// Where training metrics go (loss, lr, grad norm, tokens/s, ms/step, validation figures). The
// trainer writes to the MetricsSink interface; the JSONL file in the run directory is one sink,
// the experiment tracker's client another.

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace nmt::train {

class MetricsSink {
 public:
  virtual ~MetricsSink() = default;
  virtual void log(const std::string& key, std::int64_t step, double value) = 0;
  virtual void flush() {}
};

// One JSON object a line: {"step": 100, "key": "train/loss", "value": 5.2, "time": 1700000000.1}
// Appends, so a resumed run continues the same file.
class JsonlMetricsSink : public MetricsSink {
 public:
  explicit JsonlMetricsSink(const std::string& path);
  void log(const std::string& key, std::int64_t step, double value) override;
  void flush() override;

 private:
  std::string path_;
  std::ofstream out_;
};

// Forwards to several sinks.
class FanoutMetricsSink : public MetricsSink {
 public:
  void add(std::shared_ptr<MetricsSink> sink) { sinks_.push_back(std::move(sink)); }
  void log(const std::string& key, std::int64_t step, double value) override;
  void flush() override;

 private:
  std::vector<std::shared_ptr<MetricsSink>> sinks_;
};

}  // namespace nmt::train
