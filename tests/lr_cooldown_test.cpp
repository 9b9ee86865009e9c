// The linear cool-down of the learning rate over a run's last fraction (not the paper's; off by
// default).

#include <cmath>
#include <stdexcept>

#include "test_utils.h"
#include "trainer/optim/lr_cooldown.h"

namespace nmt {
namespace {

TEST(LrCooldown, LinearFromOneToZeroOverTheRunsLastFraction) {
  EXPECT_EQ(optim::cooldown_factor(0.0, 0.0), 1.0);  // no cool-down: the paper's schedule
  EXPECT_EQ(optim::cooldown_factor(0.999, 0.0), 1.0);
  EXPECT_EQ(optim::cooldown_factor(0.0, 0.25), 1.0);
  EXPECT_EQ(optim::cooldown_factor(0.75, 0.25), 1.0);  // where the cool-down starts
  EXPECT_NEAR(optim::cooldown_factor(0.8, 0.25), 0.8, 1e-12);
  EXPECT_NEAR(optim::cooldown_factor(0.9, 0.25), 0.4, 1e-12);
  EXPECT_EQ(optim::cooldown_factor(1.0, 0.25), 0.0);
  EXPECT_EQ(optim::cooldown_factor(1.5, 0.25), 0.0);          // past a time budget: never negative
  EXPECT_NEAR(optim::cooldown_factor(0.3, 1.0), 0.7, 1e-12);  // the whole run
  EXPECT_THROW(optim::cooldown_factor(0.5, 1.5), std::invalid_argument);
  EXPECT_THROW(optim::cooldown_factor(0.5, -0.1), std::invalid_argument);
  EXPECT_THROW(optim::cooldown_factor(std::nan(""), 0.5), std::invalid_argument);
}

}  // namespace
}  // namespace nmt
