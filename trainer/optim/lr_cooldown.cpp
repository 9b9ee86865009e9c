#include "trainer/optim/lr_cooldown.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace nmt::optim {

double cooldown_factor(double done, double cooldown) {
  if (!(cooldown >= 0.0 && cooldown <= 1.0) || std::isnan(done)) {
    throw std::invalid_argument("cooldown_factor: cooldown must be in [0, 1] and done a number");
  }
  if (cooldown == 0.0) return 1.0;
  return std::clamp((1.0 - done) / cooldown, 0.0, 1.0);
}

}  // namespace nmt::optim
