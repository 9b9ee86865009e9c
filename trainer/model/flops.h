#pragma once
// Model FLOPs of one training step, counted from the architecture (matrix products and attention
// scores, multiply-add = 2 FLOPs; backward = 2x forward), for model-FLOPs utilization: achieved
// model FLOP/s over the machine's measured matrix-multiply peak. Padded positions are counted,
// since they are computed; element-wise work (softmax, norms, dropout) is not.

#include <cstdint>

#include "trainer/config/model_config.h"

namespace nmt::model {

// Forward FLOPs for `batch` pairs padded to src_len and tgt_len.
double forward_flops(const ModelConfig& config, std::int64_t batch, std::int64_t src_len,
                     std::int64_t tgt_len);
// Forward + backward.
inline double training_flops(const ModelConfig& config, std::int64_t batch, std::int64_t src_len,
                             std::int64_t tgt_len) {
  return 3.0 * forward_flops(config, batch, src_len, tgt_len);
}

}  // namespace nmt::model
