#pragma once
// A reader of a run directory's metrics.jsonl, the trainer's durable record of every metric point
// (trainer/train/metrics_sink.h writes it: one object a line,
// {"step": 100, "key": "train/loss", "value": 5.2, "time": 1700000000.1}, value null for a
// non-finite one). It streams: a batch at a time, so a file of millions of lines costs one batch
// of memory. One parser for both readers: the trainer's resume (trim_metrics_log) and
// nmt-tracker sync, which links no LibTorch.

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace nmt {

// One line of metrics.jsonl.
struct MetricLogLine {
  std::string key;
  std::int64_t step = 0;
  std::optional<double> value;  // null in the file: a non-finite value
  double time = 0.0;            // Unix seconds when it was logged; 0 when the line has none
  std::size_t line = 0;         // 1-based line number in the file
};

// One line's text parsed; std::invalid_argument saying what is wrong with it otherwise.
MetricLogLine parse_metric_log_line(const std::string& text);

class MetricsLogReader {
 public:
  // Opens `path`; throws std::runtime_error naming it when it cannot be read.
  explicit MetricsLogReader(std::string path);

  // Up to `max_lines` next lines (empty lines skipped), in file order; empty at the end. A line
  // that does not parse throws std::runtime_error "PATH:LINE: ..." after the lines before it were
  // returned: the batch ends just before it, and the next call throws. A torn last line (no
  // newline after it, and not parseable: a trainer killed during a write) is skipped with a
  // warning, as the trainer skips it when it resumes.
  std::vector<MetricLogLine> next_batch(std::size_t max_lines);

  std::uint64_t bytes_read() const { return bytes_read_; }
  std::uint64_t size() const { return size_; }  // the file's size when opened
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  std::ifstream in_;
  std::uint64_t size_ = 0;
  std::uint64_t bytes_read_ = 0;
  std::size_t line_ = 0;
  std::optional<std::string> error_;  // a bad line met, thrown at the next call
};

}  // namespace nmt
