#pragma once
// Updates with non-finite gradients are skipped: an inf or NaN gradient norm (a NaN in the loss
// reaches every gradient) leaves the parameters and Adam's moments as they were; the update's
// batches are consumed and the step counts, so the data order and the learning-rate schedule do
// not depend on how many were skipped. Too many in a row mean the run itself is broken (its
// weights, its data or its learning rate): training stops with an error, and the last checkpoint,
// written before the trouble, stays the newest. No LibTorch, no I/O but the log.

#include <cstdint>

namespace nmt::train {

class SkippedUpdates {
 public:
  // `limit`: non-finite updates in a row that stop the run (train.max_skipped_updates).
  explicit SkippedUpdates(std::int64_t limit) : limit_(limit) {}

  // Records update `step`, whose gradient norm is `grad_norm` (NaN when unknown) and whose
  // gradients were all finite or not; `counts` is false for skips that are routine (an fp16 loss
  // scale still high enough to overflow: the scaler halves it). Returns whether to apply the
  // update; throws std::runtime_error after `limit` counted skips in a row.
  bool admit(std::int64_t step, bool finite, double grad_norm, bool counts = true);

  std::int64_t in_a_row() const { return in_a_row_; }
  std::int64_t total() const { return total_; }

 private:
  std::int64_t limit_;
  std::int64_t in_a_row_ = 0;
  std::int64_t total_ = 0;
};

}  // namespace nmt::train
