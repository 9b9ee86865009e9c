#include "common/metrics_log.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

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

MetricsLogReader::MetricsLogReader(std::string path)
    : path_(std::move(path)), in_(path_, std::ios::binary) {
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
  while (batch.size() < max_lines && std::getline(in_, text)) {
    ++line_;
    const bool ended = !in_.eof();  // a newline followed the line
    bytes_read_ += text.size() + (ended ? 1 : 0);
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
