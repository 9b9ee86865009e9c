#pragma once
// One parameter update of one rank (paper section 5): this rank's micro-batches accumulated
// (forward, label-smoothed loss summed over tokens, backward), then, once the gradients are
// reduced over ranks, token-averaged gradients, the skip of a non-finite update
// (skipped_updates.h), clipping, the learning rate (noam, times the cool-down) and Adam. Nothing
// reads a value back from the device but one finite check (the fp16 scaler's, else the gradient
// norm): the losses stay on the device until a log step reads them, token counts come from the
// host batches, clipping and Adam run as device kernels.

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <vector>

#include "trainer/config/train_config.h"
#include "trainer/distributed/gradient_reducer.h"
#include "trainer/model/transformer.h"
#include "trainer/optim/fused_adam.h"
#include "trainer/runtime/precision.h"
#include "trainer/train/batch_stream.h"
#include "trainer/train/skipped_updates.h"
#include "trainer/train/update_agreement.h"

namespace nmt::train {

// One update: the votes the ranks agree on (token counts summed over ranks, once agreed); the
// loss sums are this rank's, on the device; local_tokens is this rank's share, for its tokens/s.
struct UpdateStats {
  UpdateAgreement votes;
  at::Tensor loss_sum, nll_sum;     // 0-dim, this rank's batches
  std::int64_t local_tokens = 0;    // source + target tokens of this rank's batches
  double grad_norm = std::nan("");  // before clipping; NaN when not read (fp16)
  double allreduce_seconds = 0.0;   // this rank's wait for the gradient all-reduce
  double lr = 0.0;                  // the rate this update was given (applied or skipped)
  bool applied = false;             // false when skipped (skipped_updates.h)
};

class Updater {
 public:
  // Receives the update's step (1-based) and the parameters after the gradients' all-reduce,
  // before they are checked and applied (tests inject faults through it).
  using GradientHook = std::function<void(std::int64_t step, const std::vector<at::Tensor>&)>;

  // `config.train` resolved (precision, accumulation); `reducer`: null with one rank.
  Updater(const RunConfig& config, model::Transformer model, optim::FusedAdam& adam,
          BatchStream& batches, distributed::GradientReducer* reducer, c10::Device device,
          runtime::Precision precision, GradientHook after_backward);

  // Update `step`'s micro-batches of this rank, their gradients left to the reducer.
  void accumulate(std::int64_t step, UpdateStats& u);
  // Applies update `step` with the agreed `u.votes` (tokens, done fraction); sets u.grad_norm and
  // u.lr. The gradients must be reduced.
  void apply(std::int64_t step, UpdateStats& u);
  // The parameters' gradient norm (a read from the device).
  double gradient_norm() const;
  std::int64_t skipped_total() const { return skipped_.total(); }

 private:
  TrainConfig train_;
  std::int64_t d_model_;
  model::Transformer model_;
  optim::FusedAdam& adam_;
  BatchStream& batches_;
  distributed::GradientReducer* reducer_;
  c10::Device device_;
  runtime::Precision precision_;
  GradientHook after_backward_;
  runtime::LossScaler scaler_;
  SkippedUpdates skipped_;
};

}  // namespace nmt::train
