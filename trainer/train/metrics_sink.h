#pragma once
// The trainer's metrics sinks (common/metrics_sink.h has the interface): the run directory's
// metrics.jsonl and a fan-out to several sinks; the tracker's client is another
// (tracking/run_tracking.h).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/append_file.h"
#include "common/metrics_sink.h"

namespace nmt::train {

// One JSON object a line: {"step": 100, "key": "train/loss", "value": 5.2, "time": 1700000000.1}
// Appends, so a resumed run continues the same file (trim_metrics_log first). Lines are written
// at flush(), whole or not at all; lines a failed write could not record are kept and written
// again at the next flush, and failure() says why and which steps wait.
class JsonlMetricsSink : public MetricsSink {
 public:
  explicit JsonlMetricsSink(const std::string& path);
  void log(const std::string& key, std::int64_t step, double value) override;
  void flush() override;
  std::string failure() const override;

 private:
  AppendFile file_;
  std::string pending_;  // lines not written yet
  std::int64_t pending_first_step_ = -1, pending_last_step_ = -1;
  std::string error_;  // the last failed write's, while lines wait
  double last_sync_ = 0.0;
};

// Forwards to several sinks.
class FanoutMetricsSink : public MetricsSink {
 public:
  void add(std::shared_ptr<MetricsSink> sink) { sinks_.push_back(std::move(sink)); }
  void log(const std::string& key, std::int64_t step, double value) override;
  void flush() override;
  std::string failure() const override;  // the first failing sink's

 private:
  std::vector<std::shared_ptr<MetricsSink>> sinks_;
};

// Makes the metrics file of a run resumed from the checkpoint of step `resume_step` hold one line
// per (key, step) for steps up to it and nothing after (the resumed run logs those steps again):
// drops later lines, earlier duplicates of a (key, step), and a torn or
// unreadable line (with a warning naming its line number), rewriting the file atomically when
// anything is dropped. Returns the lines kept, in file order. A missing file (or a link to nothing,
// the file to be created through it) is empty; one that is
// not a regular file (a link to /dev/zero) is a std::runtime_error naming it, and a line past
// kMaxMetricLineBytes is dropped as unreadable without being held.
std::vector<MetricRecord> trim_metrics_log(const std::string& path, std::int64_t resume_step);

}  // namespace nmt::train
