#pragma once
// A reader of a run directory's metrics.jsonl, the trainer's durable record of every metric point
// (trainer/train/metrics_sink.h writes it: one object a line,
// {"step": 100, "key": "train/loss", "value": 5.2, "time": 1700000000.1}, value null for a
// non-finite one). It streams: a batch at a time, so a file of millions of lines costs one batch
// of memory. One parser for both readers: the trainer's resume (trim_metrics_log) and
// nmt-tracker sync, which links no LibTorch.

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <istream>
#include <optional>
#include <string>
#include <vector>

namespace nmt {

// The largest step of a metric point: 2^53 - 1, the largest integer every JSON reader (the
// dashboard's JavaScript too) holds exactly. The tracker's wire takes the same range.
inline constexpr std::int64_t kMaxMetricStep = (std::int64_t{1} << 53) - 1;

// The longest line of metrics.jsonl read: a record is about a hundred bytes; a longer line (a
// file that is not a metrics log, a sparse file of zeros) is not read into memory.
inline constexpr std::size_t kMaxMetricLineBytes = 64u << 10;

// One line of metrics.jsonl.
struct MetricLogLine {
  std::string key;
  std::int64_t step = 0;
  std::optional<double> value;  // null in the file: a non-finite value
  double time = 0.0;            // Unix seconds when it was logged; 0 when the line has none
  std::size_t line = 0;         // 1-based line number in the file
};

// One line's text parsed; std::invalid_argument saying what is wrong with it otherwise (a step
// outside 0 to kMaxMetricStep included).
MetricLogLine parse_metric_log_line(const std::string& text);

// What read_log_line found.
enum class LogLineRead {
  kLine,      // a line and its newline
  kLastLine,  // a line without a newline after it: the file's end
  kTooLong,   // a line past kMaxMetricLineBytes, skipped to its newline; `text` holds its start
  kEnd,       // nothing more
};

// The next line of `in` into `text`, without its newline; never more than kMaxMetricLineBytes of
// it in memory. `bytes` is increased by the bytes consumed.
LogLineRead read_log_line(std::istream& in, std::string& text, std::uint64_t& bytes);

// Throws std::runtime_error naming `path` unless it is a regular file (a link to one included):
// metrics.jsonl is a file the trainer appends to and rewrites, never a device or a pipe.
void require_regular_metrics_log(const std::string& path);

class MetricsLogReader {
 public:
  // Opens `path`; throws std::runtime_error naming it when it cannot be read or is not a regular
  // file.
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
