#include "trainer/optim/noam_schedule.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace nmt::optim {

double noam_learning_rate(std::int64_t step, std::int64_t d_model, std::int64_t warmup,
                          double factor) {
  if (step < 1 || d_model < 1 || warmup < 1) {
    throw std::invalid_argument("noam_learning_rate: step, d_model and warmup must be positive");
  }
  const double s = static_cast<double>(step);
  return factor / std::sqrt(static_cast<double>(d_model)) *
         std::min(1.0 / std::sqrt(s), s * std::pow(static_cast<double>(warmup), -1.5));
}

}  // namespace nmt::optim
