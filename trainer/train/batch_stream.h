#pragma once
// One rank's training batches, in the order of the epoch plans, by global update (data
// parallelism's sharding). An update takes the next `update_batches` batches of the plan, the same
// ones whatever the number of ranks; rank r of N takes the r-th run of update_batches / N of them
// as its accumulated micro-batches. So a run requeued on 1, 2 or 4 ranks sees the same data in the
// same updates. An epoch's last batches that cannot fill an update are left for the next epoch's
// shuffle. The position (epoch, batch in epoch) of the next update is what checkpoints store, so a
// resumed run sees exactly the batches an uninterrupted one would.
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
  std::int64_t batch_in_epoch = 0;  // index in that epoch's plan of the next update's first batch
  bool operator==(const BatchPosition& o) const {
    return epoch == o.epoch && batch_in_epoch == o.batch_in_epoch;
  }
};

// The seed of one micro-batch's randomness (dropout): a function of the run's seed, the update and
// the batch's index within the update, so the masks are the same on any number of ranks and after
// a resume.
std::uint64_t micro_batch_seed(std::uint64_t seed, std::int64_t step, std::int64_t index_in_update);

class BatchStream {
 public:
  // `update_batches` must be a multiple of `ranks` (std::invalid_argument otherwise).
  BatchStream(const data::TokenBatcher& batcher, int rank, int ranks, std::int64_t update_batches,
              c10::Device device);

  std::int64_t batches_per_rank() const { return per_rank_; }
  // Where the next update starts; seek() moves there (a resumed run's checkpoint position). Only
  // meaningful between updates (after batches_per_rank() calls of next()).
  BatchPosition position() const { return cursor_.update; }
  void seek(const BatchPosition& position) { cursor_ = {position, 0}; }

  // This rank's next micro-batch, on the device; after the last of the update the position moves
  // to the next update.
  data::Batch next();
  // The index within its update (0 .. update_batches - 1, the same on any number of ranks) of the
  // batch next() returned last: what seeds its dropout.
  std::int64_t last_index_in_update() const { return last_index_; }
  // Prepares the batch next() will return, with its copy to the device queued.
  void prefetch();

 private:
  struct Cursor {
    BatchPosition update;
    std::int64_t part = 0;  // this rank's micro-batch within the update
    bool operator==(const Cursor& o) const { return update == o.update && part == o.part; }
  };
  struct Prepared {
    Cursor at, after;
    std::int64_t index_in_update = 0;
    data::Batch batch;
  };
  Prepared prepare(Cursor at);
  data::EpochPlan& plan(std::int64_t epoch);
  // Whether `epoch` has a full update starting at batch `first`.
  bool update_fits(std::int64_t epoch, std::int64_t first);

  const data::TokenBatcher& batcher_;
  int rank_;
  std::int64_t update_batches_, per_rank_;
  c10::Device device_;
  Cursor cursor_;
  std::int64_t last_index_ = 0;
  std::optional<Prepared> ahead_;
  std::optional<data::EpochPlan> plan_;
};

}  // namespace nmt::train
