#pragma once
// One rank's training batches in the order of the epoch plans (data parallelism's sharding): each
// micro-step of the job takes the next `ranks` batches of the plan, rank r the r-th; an epoch's
// last batches that cannot give every rank one are left for the next epoch's shuffle. The position
// (epoch, batch in epoch) is what checkpoints store, so a resumed run sees exactly the batches an
// uninterrupted one would.
//
// On CUDA each batch is built in pinned host memory and copied asynchronously; prefetch(), called
// once the current batch's work is queued on the GPU, builds the next batch and queues its copy
// while the GPU computes. prefetch() never moves the position.

#include <c10/core/Device.h>

#include <cstdint>
#include <optional>

#include "trainer/data/batching.h"

namespace nmt::train {

struct BatchPosition {
  std::int64_t epoch = 0;
  std::int64_t batch_in_epoch = 0;  // index in that epoch's plan of this rank group's next batch
  bool operator==(const BatchPosition& o) const {
    return epoch == o.epoch && batch_in_epoch == o.batch_in_epoch;
  }
};

class BatchStream {
 public:
  BatchStream(const data::TokenBatcher& batcher, int rank, int ranks, c10::Device device);

  // Where the next batch comes from; seek() moves there (a resumed run's checkpoint position).
  BatchPosition position() const { return position_; }
  void seek(const BatchPosition& position) { position_ = position; }

  // This rank's batch at the position, on the device; moves the position on by one micro-step.
  data::Batch next();
  // Prepares the batch next() will return, with its copy to the device queued.
  void prefetch();

 private:
  struct Prepared {
    BatchPosition at, after;
    data::Batch batch;
  };
  Prepared prepare(BatchPosition at);
  const data::BatchPlan& plan(std::int64_t epoch);

  const data::TokenBatcher& batcher_;
  int rank_, ranks_;
  c10::Device device_;
  BatchPosition position_;
  std::optional<Prepared> ahead_;
  data::BatchPlan plan_;
  std::int64_t plan_epoch_ = -1;
};

}  // namespace nmt::train
