#include "trainer/train/batch_stream.h"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

namespace nmt::train {

BatchStream::BatchStream(const data::TokenBatcher& batcher, int rank, int ranks, c10::Device device)
    : batcher_(batcher), rank_(rank), ranks_(ranks), device_(device) {}

const data::BatchPlan& BatchStream::plan(std::int64_t epoch) {
  if (plan_epoch_ != epoch) {
    plan_ = batcher_.epoch_plan(epoch);
    plan_epoch_ = epoch;
    if (plan_.empty()) throw std::runtime_error("no training batches: is the train split empty?");
  }
  return plan_;
}

BatchStream::Prepared BatchStream::prepare(BatchPosition at) {
  Prepared p;
  p.at = at;
  while (at.batch_in_epoch + ranks_ > static_cast<std::int64_t>(plan(at.epoch).size())) {
    if (at.batch_in_epoch == 0) {
      throw std::runtime_error(fmt::format("an epoch has {} batches, fewer than the {} ranks",
                                           plan(at.epoch).size(), ranks_));
    }
    ++at.epoch;
    at.batch_in_epoch = 0;
  }
  p.batch =
      batcher_.make_batch(plan(at.epoch)[static_cast<std::size_t>(at.batch_in_epoch + rank_)]);
  p.after = {at.epoch, at.batch_in_epoch + ranks_};
  if (device_.is_cuda()) {
    // Pinned pages let the copy run asynchronously; the caching host allocator keeps them until
    // the copy has finished.
    for (auto* t : {&p.batch.src, &p.batch.tgt_in, &p.batch.tgt_out}) {
      *t = t->pin_memory().to(device_, /*non_blocking=*/true);
    }
  }
  return p;
}

data::Batch BatchStream::next() {
  if (!ahead_ || !(ahead_->at == position_)) ahead_ = prepare(position_);
  Prepared p = std::move(*ahead_);
  ahead_.reset();
  position_ = p.after;
  return std::move(p.batch);
}

void BatchStream::prefetch() {
  if (!ahead_ || !(ahead_->at == position_)) ahead_ = prepare(position_);
}

}  // namespace nmt::train
