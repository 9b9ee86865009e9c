#include "trainer/train/skipped_updates.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <stdexcept>

namespace nmt::train {

bool SkippedUpdates::admit(std::int64_t step, bool finite, double grad_norm, bool counts) {
  if (finite) {
    in_a_row_ = 0;
    return true;
  }
  ++total_;
  if (!counts) return false;
  ++in_a_row_;
  if (in_a_row_ >= limit_) {
    throw std::runtime_error(fmt::format(
        "step {}: {} updates in a row had a non-finite gradient norm (train.max_skipped_updates "
        "{}): stopping; the weights, the data or the learning rate are broken (the checkpoints "
        "hold the weights from before the first of them)",
        step, in_a_row_, limit_));
  }
  spdlog::warn("step {}: non-finite gradient norm ({}): update skipped ({} in a row, limit {})",
               step, grad_norm, in_a_row_, limit_);
  return false;
}

}  // namespace nmt::train
