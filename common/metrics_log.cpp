#include "common/metrics_log.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/checked_paths.h"

namespace nmt {

MetricLogLine parse_metric_log_line(const std::string& text) {
  const auto json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) throw std::invalid_argument("not a JSON object");
  MetricLogLine line;
  const auto key = json.find("key");
  if (key == json.end() || !key->is_string() || key->get<std::string>().empty()) {
    throw std::invalid_argument("\"key\" must be a non-empty string");
  }
  line.key = key->get<std::string>();
  const auto step = json.find("step");
  if (step == json.end() || !step->is_number_integer()) {
    throw std::invalid_argument("\"step\" must be an integer");
  }
  if (step->is_number_unsigned() ? step->get<std::uint64_t>() > kMaxMetricStep
                                 : step->get<std::int64_t>() < 0) {
    throw std::invalid_argument(
        fmt::format("\"step\" must be from 0 to {}, not {}", kMaxMetricStep, step->dump()));
  }
  line.step = step->get<std::int64_t>();
  const auto value = json.find("value");
  if (value == json.end() || !(value->is_null() || value->is_number())) {
    throw std::invalid_argument("\"value\" must be a number or null");
  }
  if (value->is_number()) line.value = value->get<double>();
  if (const auto time = json.find("time"); time != json.end()) {
    if (!time->is_number()) throw std::invalid_argument("\"time\" must be a number");
    line.time = time->get<double>();
  }
  return line;
}

LogLineRead read_log_line(std::istream& in, std::string& text, std::uint64_t& bytes) {
  text.clear();
  std::streambuf& buffer = *in.rdbuf();
  bool too_long = false;
  for (;;) {
    const auto c = buffer.sbumpc();
    if (c == std::char_traits<char>::eof()) {
      in.setstate(std::ios::eofbit);
      if (too_long) return LogLineRead::kTooLong;
      return text.empty() ? LogLineRead::kEnd : LogLineRead::kLastLine;
    }
    ++bytes;
    if (c == '\n') return too_long ? LogLineRead::kTooLong : LogLineRead::kLine;
    if (text.size() < kMaxMetricLineBytes) {
      text.push_back(static_cast<char>(c));
    } else {
      too_long = true;
    }
  }
}

void require_regular_metrics_log(const std::string& path) {
  if (path_kind(path) != PathKind::kRegular) {
    throw std::runtime_error(
        fmt::format("{}: the metrics log is {}, not a regular file", path, describe_path(path)));
  }
}

MetricsLogReader::MetricsLogReader(std::string path) : path_(std::move(path)) {
  require_regular_metrics_log(path_);
  in_.open(path_, std::ios::binary);
  std::error_code error;
  const auto size = std::filesystem::file_size(path_, error);
  if (!in_ || error) {
    throw std::runtime_error(
        fmt::format("{}: cannot be read ({})", path_, error ? error.message() : "cannot open"));
  }
  size_ = size;
}

std::vector<MetricLogLine> MetricsLogReader::next_batch(std::size_t max_lines) {
  if (error_) throw std::runtime_error(*error_);
  std::vector<MetricLogLine> batch;
  std::string text;
  while (batch.size() < max_lines) {
    const LogLineRead read = read_log_line(in_, text, bytes_read_);
    if (read == LogLineRead::kEnd) break;
    ++line_;
    const bool ended = read != LogLineRead::kLastLine;  // a newline followed the line
    if (read == LogLineRead::kTooLong) {
      error_ = fmt::format("{}:{}: not a metric record (longer than {} bytes): {}", path_, line_,
                           kMaxMetricLineBytes, text.substr(0, 120));
      if (batch.empty()) throw std::runtime_error(*error_);
      break;
    }
    if (text.empty()) continue;
    try {
      batch.push_back(parse_metric_log_line(text));
      batch.back().line = line_;
    } catch (const std::invalid_argument& e) {
      if (!ended) {
        spdlog::warn("{}:{}: skipping a torn last line ({})", path_, line_, e.what());
        break;
      }
      error_ = fmt::format("{}:{}: not a metric record ({}): {}", path_, line_, e.what(),
                           text.substr(0, 120));
      if (batch.empty()) throw std::runtime_error(*error_);
      break;
    }
  }
  if (in_.bad()) throw std::runtime_error(fmt::format("{}: read failed at line {}", path_, line_));
  return batch;
}

}  // namespace nmt
