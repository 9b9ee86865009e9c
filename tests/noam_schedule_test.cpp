// The learning-rate schedule of paper section 5.3 at known steps: linear warm-up, then the
// inverse square root of the step.

#include <cmath>
#include <stdexcept>

#include "test_utils.h"
#include "trainer/optim/noam_schedule.h"

namespace nmt {
namespace {

TEST(NoamSchedule, KnownValues) {
  // Peak at the end of warmup: (d_model * warmup)^-0.5 = (512 * 4000)^-0.5.
  EXPECT_NEAR(optim::noam_learning_rate(4000, 512, 4000), 1.0 / std::sqrt(512.0 * 4000.0), 1e-15);
  EXPECT_NEAR(optim::noam_learning_rate(4000, 512, 4000), 6.987712429686844e-4, 1e-15);
  // Linear warmup: step 1 is warmup^-1.5 / sqrt(d_model).
  EXPECT_NEAR(optim::noam_learning_rate(1, 512, 4000), std::pow(4000.0, -1.5) / std::sqrt(512.0),
              1e-18);
  EXPECT_NEAR(optim::noam_learning_rate(2000, 512, 4000),
              0.5 * optim::noam_learning_rate(4000, 512, 4000), 1e-15);
  // Inverse square root decay after warmup: 4x the steps, half the rate.
  EXPECT_NEAR(optim::noam_learning_rate(16000, 512, 4000),
              0.5 * optim::noam_learning_rate(4000, 512, 4000), 1e-15);
  EXPECT_NEAR(optim::noam_learning_rate(100000, 512, 4000), 1.0 / std::sqrt(512.0 * 100000.0),
              1e-15);
  EXPECT_NEAR(optim::noam_learning_rate(4000, 1024, 4000, 2.0), 2.0 / std::sqrt(1024.0 * 4000.0),
              1e-15);
  EXPECT_THROW(optim::noam_learning_rate(0, 512, 4000), std::invalid_argument);
}

}  // namespace
}  // namespace nmt
