// The tick pieces of svg_plot.h: where the labelled marks of an axis fall (1-2-5 steps, durations,
// powers of ten).

#include "tracker/view/svg_plot.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <stdexcept>

namespace nmt::tracker {
namespace {

// Of the candidate steps (ascending), the one giving the tick count closest to `target` (the
// smaller step on ties).
double closest_step(double lo, double hi, int target, const std::vector<double>& candidates) {
  double best = candidates.back();
  double best_distance = std::numeric_limits<double>::infinity();
  for (const double step : candidates) {
    const double count = std::floor(hi / step + 1e-9) - std::ceil(lo / step - 1e-9) + 1;
    const double distance = std::abs(count - target);
    if (distance < best_distance) {
      best = step;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace

std::vector<double> ticks_with_step(double lo, double hi, double step) {
  std::vector<double> ticks;
  const double first = std::ceil(lo / step - 1e-9);
  const double last = std::floor(hi / step + 1e-9);
  for (double k = first; k <= last && ticks.size() < 1000; ++k) {
    ticks.push_back(k * step);
  }
  return ticks;
}

std::vector<double> nice_ticks(double lo, double hi, int target, double* step_out) {
  if (!(lo < hi) || !std::isfinite(lo) || !std::isfinite(hi) || target < 2) {
    throw std::invalid_argument(fmt::format(
        "nice_ticks: need finite lo < hi and target >= 2, got [{}, {}], {}", lo, hi, target));
  }
  const double magnitude = std::pow(10.0, std::floor(std::log10((hi - lo) / target)));
  const double step =
      closest_step(lo, hi, target, {magnitude, 2 * magnitude, 5 * magnitude, 10 * magnitude});
  if (step_out != nullptr) *step_out = step;
  return ticks_with_step(lo, hi, step);
}

std::vector<double> duration_ticks(double lo, double hi, int target, double* step_out) {
  if (!(lo < hi) || !std::isfinite(lo) || !std::isfinite(hi) || target < 2) {
    throw std::invalid_argument(fmt::format(
        "duration_ticks: need finite lo < hi and target >= 2, got [{}, {}], {}", lo, hi, target));
  }
  if ((hi - lo) / target < 1) {
    return nice_ticks(lo, hi, target, step_out);
  }
  std::vector<double> steps = {1,   2,   5,    10,   15,   30,    60,    120,  300,
                               600, 900, 1800, 3600, 7200, 10800, 21600, 43200};
  for (double days = 1; days * 86400 < (hi - lo) * 10; days *= 10) {
    for (const double m : {1, 2, 5}) steps.push_back(m * days * 86400);
  }
  const double step = closest_step(lo, hi, target, steps);
  if (step_out != nullptr) *step_out = step;
  return ticks_with_step(lo, hi, step);
}

std::vector<double> log_ticks(double lo, double hi) {
  if (!(lo > 0) || !(lo < hi) || !std::isfinite(hi)) {
    throw std::invalid_argument(
        fmt::format("log_ticks: need finite 0 < lo < hi, got [{}, {}]", lo, hi));
  }
  const double first = std::floor(std::log10(lo) + 1e-9);
  const double last = std::floor(std::log10(hi) + 1e-9);
  const auto inside = [&](double v) { return v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9); };
  std::vector<double> ticks;
  if (std::log10(hi / lo) <= 3 + 1e-9) {
    for (double d = first; d <= last; ++d) {
      for (const double m : {1, 2, 5}) {
        if (inside(m * std::pow(10.0, d))) ticks.push_back(m * std::pow(10.0, d));
      }
    }
  } else {
    const double every = std::ceil((last - first + 1) / 10);
    for (double d = std::ceil(first / every) * every; d <= last; d += every) {
      if (inside(std::pow(10.0, d))) ticks.push_back(std::pow(10.0, d));
    }
  }
  return ticks.size() >= 2 ? ticks : nice_ticks(lo, hi, 4);
}

}  // namespace nmt::tracker
