#pragma once
// The learning-rate schedule of paper section 5.3: linear warmup for `warmup` steps, then decay
// with the inverse square root of the step:
//   lr(step) = factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)
// Steps count parameter updates from 1; the peak, at step == warmup, is factor * (d_model *
// warmup)^-0.5.

#include <cstdint>

namespace nmt::optim {

double noam_learning_rate(std::int64_t step, std::int64_t d_model, std::int64_t warmup,
                          double factor = 1.0);

}  // namespace nmt::optim
