#include "trainer/train/metrics_sink.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <stdexcept>

namespace nmt::train {

JsonlMetricsSink::JsonlMetricsSink(const std::string& path)
    : path_(path), out_(path, std::ios::app) {
  if (!out_) throw std::runtime_error(path + ": cannot open the metrics file for appending");
}

void JsonlMetricsSink::log(const std::string& key, std::int64_t step, double value) {
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  // JSON has no NaN or infinity: write null, so a diverged run still leaves a parseable file.
  const std::string number = std::isfinite(value) ? fmt::format("{:.9g}", value) : "null";
  out_ << fmt::format("{{\"step\": {}, \"key\": \"{}\", \"value\": {}, \"time\": {:.3f}}}\n", step,
                      key, number, now);
}

void JsonlMetricsSink::flush() {
  out_.flush();
}

void FanoutMetricsSink::log(const std::string& key, std::int64_t step, double value) {
  for (auto& sink : sinks_) sink->log(key, step, value);
}

void FanoutMetricsSink::flush() {
  for (auto& sink : sinks_) sink->flush();
}

}  // namespace nmt::train
