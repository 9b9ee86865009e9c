#include "common/progress.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cmath>

namespace nmt {

std::string with_thousands(std::int64_t value) {
  std::string digits = std::to_string(value < 0 ? -value : value);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return value < 0 ? "-" + out : out;
}

std::string format_duration(double seconds) {
  const auto total = static_cast<std::int64_t>(std::llround(std::max(0.0, seconds)));
  const auto h = total / 3600, m = (total % 3600) / 60, s = total % 60;
  return h > 0 ? fmt::format("{}:{:02}:{:02}", h, m, s) : fmt::format("{}:{:02}", m, s);
}

std::string format_rate(double per_second) {
  // Slow work (training steps) needs decimals; fast work (lines) reads better with separators.
  if (per_second < 10.0) return fmt::format("{:.2f}", per_second);
  return with_thousands(static_cast<std::int64_t>(per_second));
}

ProgressMeter::ProgressMeter(std::string label, std::string unit, double interval_seconds)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      interval_(interval_seconds),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

void ProgressMeter::update(std::int64_t count, double fraction) {
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < interval_) return;
  last_ = now;
  log_line(count, fraction, std::chrono::duration<double>(now - start_).count());
}

void ProgressMeter::start_at(std::int64_t count, double fraction) {
  start_count_ = count;
  start_fraction_ = fraction;
}

void ProgressMeter::log_line(std::int64_t count, double fraction, double elapsed) const {
  const double done = static_cast<double>(count - start_count_);
  const double rate = elapsed > 0 ? done / elapsed : 0.0;
  std::string line = fmt::format("{}: {} {}, {} {}/s", label_, with_thousands(count), unit_,
                                 format_rate(rate), unit_);
  if (fraction > start_fraction_ && fraction <= 1.0) {
    const double eta = elapsed * (1.0 - fraction) / (fraction - start_fraction_);
    line += fmt::format(", {:.1f}% done, ETA {}", 100.0 * fraction, format_duration(eta));
  }
  spdlog::info("{}", line);
}

double ProgressMeter::finish(std::int64_t count) {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(count - start_count_) / elapsed : 0.0;
  spdlog::info("{}: done, {} {} in {} ({} {}/s)", label_, with_thousands(count), unit_,
               format_duration(elapsed), format_rate(rate), unit_);
  return elapsed;
}

Heartbeat::Heartbeat(std::string label, double interval_seconds) {
  const auto interval = std::chrono::duration<double>(interval_seconds);
  thread_ = std::thread([this, label = std::move(label), interval] {
    const auto start = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stop_.wait_for(lock, interval, [this] { return stopping_; })) {
      const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
      spdlog::info("{}: running for {}", label, format_duration(elapsed.count()));
    }
  });
}

Heartbeat::~Heartbeat() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  stop_.notify_one();
  thread_.join();
}

}  // namespace nmt
