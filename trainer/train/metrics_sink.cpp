#include "trainer/train/metrics_sink.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <utility>

#include "common/atomic_file.h"
#include "common/checked_paths.h"
#include "common/metrics_log.h"

namespace nmt::train {
namespace {

double unix_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// How often the file is made durable against a crash of the machine (a killed process loses
// nothing written): at most this often, at a flush.
constexpr double kSyncSeconds = 5.0;

}  // namespace

JsonlMetricsSink::JsonlMetricsSink(const std::string& path) : file_(path) {}

void JsonlMetricsSink::log(const std::string& key, std::int64_t step, double value) {
  // JSON has no NaN or infinity: write null, so a diverged run still leaves a parseable file.
  const std::string number = std::isfinite(value) ? fmt::format("{:.9g}", value) : "null";
  pending_ += fmt::format("{{\"step\": {}, \"key\": {}, \"value\": {}, \"time\": {:.3f}}}\n", step,
                          nlohmann::json(key).dump(), number, unix_seconds());
  if (pending_first_step_ < 0) pending_first_step_ = step;
  pending_last_step_ = step;
}

void JsonlMetricsSink::flush() {
  if (pending_.empty()) return;
  try {
    file_.append(pending_);
    const double now = unix_seconds();
    if (now - last_sync_ >= kSyncSeconds) {
      file_.sync();
      last_sync_ = now;
    }
  } catch (const std::exception& e) {
    if (error_.empty()) spdlog::error("{}", e.what());
    error_ = e.what();
    return;
  }
  if (!error_.empty()) spdlog::info("{}: written again", file_.path());
  pending_.clear();
  error_.clear();
  pending_first_step_ = pending_last_step_ = -1;
}

std::string JsonlMetricsSink::failure() const {
  if (error_.empty()) return {};
  return fmt::format("{} (the metrics of steps {} to {} are not recorded)", error_,
                     pending_first_step_, pending_last_step_);
}

void FanoutMetricsSink::log(const std::string& key, std::int64_t step, double value) {
  for (auto& sink : sinks_) sink->log(key, step, value);
}

void FanoutMetricsSink::flush() {
  for (auto& sink : sinks_) sink->flush();
}

std::string FanoutMetricsSink::failure() const {
  for (const auto& sink : sinks_) {
    if (auto why = sink->failure(); !why.empty()) return why;
  }
  return {};
}

std::vector<MetricRecord> trim_metrics_log(const std::string& path, std::int64_t resume_step) {
  if (nothing_at(path)) return {};
  require_regular_metrics_log(path);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": the metrics log cannot be read");
  struct Line {
    MetricRecord record;
    std::string text;
  };
  std::vector<Line> lines;
  std::map<std::pair<std::string, std::int64_t>, std::size_t> last_of;  // (key, step) -> index
  std::size_t read = 0, unreadable = 0, later = 0;
  std::string text;
  std::uint64_t bytes = 0;
  for (LogLineRead line_read; (line_read = read_log_line(in, text, bytes)) != LogLineRead::kEnd;) {
    ++read;
    if (line_read == LogLineRead::kTooLong) {
      ++unreadable;
      spdlog::warn("{}:{}: dropping a line longer than {} bytes", path, read, kMaxMetricLineBytes);
      continue;
    }
    if (text.empty()) continue;
    MetricRecord record;
    try {
      auto line = parse_metric_log_line(text);
      record = {std::move(line.key), line.step, line.value, line.time};
    } catch (const std::exception& e) {
      ++unreadable;
      spdlog::warn("{}:{}: dropping an unreadable line ({})", path, read, e.what());
      continue;
    }
    if (record.step > resume_step) {
      ++later;
      continue;
    }
    last_of[{record.key, record.step}] = lines.size();
    lines.push_back({std::move(record), std::move(text)});
  }
  std::vector<MetricRecord> kept;
  std::string contents;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (last_of.at({lines[i].record.key, lines[i].record.step}) != i) continue;
    contents += lines[i].text + "\n";
    kept.push_back(std::move(lines[i].record));
  }
  const std::size_t duplicates = lines.size() - kept.size();
  if (unreadable + later + duplicates > 0) {
    write_file_atomically(path, contents);
    spdlog::info(
        "{}: resuming at step {}: dropped {} lines of later steps (logged again now), {} earlier "
        "duplicates and {} unreadable lines; {} lines kept",
        path, resume_step, later, duplicates, unreadable, kept.size());
  }
  return kept;
}

}  // namespace nmt::train
