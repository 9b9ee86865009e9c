#include "tracker/view/human_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <ctime>
#include <stdexcept>
#include <utility>

namespace nmt::tracker {
namespace {

// "1.2300" -> "1.23", "10.000" -> "10", "100" -> "100" (no point: nothing to drop).
std::string drop_trailing_zeros(std::string text) {
  if (text.find('.') == std::string::npos) {
    return text;
  }
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') {
    text.pop_back();
  }
  return text;
}

// fmt's "{:e}" exponent, e.g. 4 from "1.234e+04".
int exponent_of(const std::string& scientific) {
  const std::size_t e = scientific.find('e');
  int exponent = 0;
  for (std::size_t i = e + 2; i < scientific.size(); ++i) {
    exponent = exponent * 10 + (scientific[i] - '0');
  }
  return scientific[e + 1] == '-' ? -exponent : exponent;
}

// The significant digits of the shortest text that reads back as `value` (finite, not zero):
// 2 for 1.5e-05, 1 for 0.1 (whose 17-digit form is 0.10000000000000001), 3 for 123000.
int shortest_digits(double value) {
  const std::string text = fmt::format("{}", value);  // fmt's shortest round trip
  std::string digits;
  for (const char c : text.substr(0, text.find('e'))) {
    if (c >= '0' && c <= '9') digits += c;
  }
  const std::size_t first = digits.find_first_not_of('0');
  if (first == std::string::npos) return 1;
  return static_cast<int>(digits.find_last_not_of('0') - first + 1);
}

// The fewest decimals (0..15) that write `step` exactly enough to tell neighbouring ticks apart.
int decimals_for(double step) {
  for (int decimals = 0; decimals < 15; ++decimals) {
    const double scaled = step * std::pow(10.0, decimals);
    if (std::abs(scaled - std::round(scaled)) < 1e-6 * scaled) {
      return decimals;
    }
  }
  return 15;
}

}  // namespace

std::string format_number(double value, int significant) {
  if (significant < 1 || significant > 17) {
    throw std::invalid_argument(
        fmt::format("significant digits: {} is outside 1..17", significant));
  }
  if (std::isnan(value)) {
    return "nan";
  }
  if (std::isinf(value)) {
    return value > 0 ? "inf" : "-inf";
  }
  if (value == 0.0) {
    return "0";
  }
  // Digits past the shortest round trip are binary noise ("1.0000000000000001e-05").
  significant = std::min(significant, shortest_digits(value));
  const std::string scientific = fmt::format("{:.{}e}", value, significant - 1);
  const int exponent = exponent_of(scientific);
  if (exponent >= -3 && exponent < 6) {
    const int decimals = std::max(0, significant - 1 - exponent);
    return drop_trailing_zeros(fmt::format("{:.{}f}", value, decimals));
  }
  const std::size_t e = scientific.find('e');
  return drop_trailing_zeros(scientific.substr(0, e)) + scientific.substr(e);
}

std::string format_count(std::int64_t value) {
  // The magnitude as unsigned, so that INT64_MIN has one too.
  const std::uint64_t magnitude =
      value < 0 ? 0 - static_cast<std::uint64_t>(value) : static_cast<std::uint64_t>(value);
  const std::string digits = std::to_string(magnitude);
  std::string out = value < 0 ? "-" : "";
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) {
      out += ',';
    }
    out += digits[i];
  }
  return out;
}

std::string format_quantity(std::int64_t count, std::string_view singular,
                            std::string_view plural) {
  const std::string noun = count == 1       ? std::string(singular)
                           : plural.empty() ? std::string(singular) + "s"
                                            : std::string(plural);
  return format_count(count) + " " + noun;
}

std::string format_utc_time(double unix_seconds) {
  // 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z.
  constexpr double kFirst = -62167219200.0;
  constexpr double kLast = 253402300799.0;
  if (!std::isfinite(unix_seconds) || unix_seconds < kFirst || unix_seconds >= kLast + 1) {
    return "-";
  }
  const auto seconds = static_cast<std::time_t>(std::floor(unix_seconds));
  std::tm utc{};
  if (gmtime_r(&seconds, &utc) == nullptr) {
    return "-";
  }
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", utc.tm_year + 1900, utc.tm_mon + 1,
                     utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec);
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds)) {
    return "-";
  }
  if (seconds < 0) {
    return "-" + format_duration(-seconds);
  }
  if (seconds >= 8.64e13) {  // a billion days: past what the integer units below can hold
    return format_number(seconds / 86400) + "d";
  }
  // Each unit is tried after rounding to its own resolution, so 59.96 s is "1m 00s", not "60.0 s".
  const auto millis = std::llround(seconds * 1000);
  if (millis < 1000) {
    return fmt::format("{} ms", millis);
  }
  const auto tenths = std::llround(seconds * 10);
  if (tenths < 600) {
    return fmt::format("{}.{} s", tenths / 10, tenths % 10);
  }
  const auto whole = std::llround(seconds);
  if (whole < 3600) {
    return fmt::format("{}m {:02}s", whole / 60, whole % 60);
  }
  const auto minutes = std::llround(seconds / 60);
  if (minutes < 24 * 60) {
    return fmt::format("{}h {:02}m", minutes / 60, minutes % 60);
  }
  const auto hours = std::llround(seconds / 3600);
  return fmt::format("{}d {:02}h", hours / 24, hours % 24);
}

std::string format_duration_compact(double seconds) {
  if (!std::isfinite(seconds)) {
    return "-";
  }
  if (seconds < 0) {
    return "-" + format_duration_compact(-seconds);
  }
  if (seconds == 0) {
    return "0s";
  }
  if (seconds < 1) {
    return format_number(seconds) + " s";
  }
  if (seconds >= 8.64e13) {
    return format_number(seconds / 86400) + "d";
  }
  const auto whole = std::llround(seconds);
  const std::array<std::pair<long long, const char*>, 4> units = {
      {{whole / 86400, "d"}, {whole / 3600 % 24, "h"}, {whole / 60 % 60, "m"}, {whole % 60, "s"}}};
  std::size_t first = 0;
  while (units[first].first == 0) {
    ++first;
  }
  std::string out = fmt::format("{}{}", units[first].first, units[first].second);
  if (first + 1 < units.size() && units[first + 1].first != 0) {
    out += fmt::format(" {}{}", units[first + 1].first, units[first + 1].second);
  }
  return out;
}

std::string format_bytes(std::uint64_t bytes) {
  if (bytes < 1024) {
    return fmt::format("{} B", bytes);
  }
  static constexpr std::array<const char*, 6> kUnits = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double scaled = static_cast<double>(bytes) / 1024;
  std::size_t unit = 0;
  // Three significant digits; a value that rounds up to 1024 moves to the next unit.
  while (unit + 1 < kUnits.size() && std::round(scaled) >= 1024) {
    scaled /= 1024;
    ++unit;
  }
  const int decimals = scaled < 9.995 ? 2 : scaled < 99.95 ? 1 : 0;
  return fmt::format("{:.{}f} {}", scaled, decimals, kUnits[unit]);
}

std::string format_tick(double value, double step) {
  if (!(step > 0) || !std::isfinite(step)) {
    throw std::invalid_argument(fmt::format("tick step: {} is not a positive number", step));
  }
  if (!std::isfinite(value)) {
    return format_number(value);
  }
  if (std::abs(value) < step * 1e-6) {
    return "0";
  }
  if (step < 1e-3 || step >= 1e15) {
    const int digits =
        static_cast<int>(std::floor(std::log10(std::abs(value))) - std::floor(std::log10(step)));
    return fmt::format("{:.{}e}", value, std::clamp(digits, 0, 16));
  }
  if (step >= 1000) {
    // The suffix of the largest 1000^n up to two steps: step 5000 reads "5k, 10k", step 1e5
    // "100k, 200k", step 5e5 "0.5M, 1M, 1.5M".
    static constexpr std::array<std::pair<double, char>, 4> kSuffixes = {
        {{1e12, 'T'}, {1e9, 'G'}, {1e6, 'M'}, {1e3, 'k'}}};
    for (const auto& [unit, suffix] : kSuffixes) {
      if (unit <= step * 2) {
        return fmt::format("{:.{}f}{}", value / unit, decimals_for(step / unit), suffix);
      }
    }
  }
  return fmt::format("{:.{}f}", value, decimals_for(step));
}

}  // namespace nmt::tracker
