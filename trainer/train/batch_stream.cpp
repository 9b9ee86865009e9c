#include "trainer/train/batch_stream.h"

#include <fmt/format.h>

#include <stdexcept>
#include <utility>

#include "common/mix64.h"

namespace nmt::train {

std::uint64_t micro_batch_seed(std::uint64_t seed, std::int64_t step,
                               std::int64_t index_in_update) {
  // Nearby (step, index) pairs get unrelated seeds.
  return splitmix64_finalize(seed ^ (static_cast<std::uint64_t>(step) * kSplitMix64Gamma) ^
                             (static_cast<std::uint64_t>(index_in_update) * 0xc2b2ae3d27d4eb4full));
}

BatchStream::BatchStream(const data::TokenBatcher& batcher, int rank, int ranks,
                         std::int64_t update_batches, c10::Device device)
    : batcher_(batcher),
      rank_(rank),
      update_batches_(update_batches),
      per_rank_(ranks > 0 ? update_batches / ranks : 0),
      device_(device) {
  if (ranks < 1 || update_batches < 1 || update_batches % ranks != 0) {
    throw std::invalid_argument(fmt::format(
        "train.update_batches: {} batches per update cannot be shared by {} ranks (it must be a "
        "positive multiple of the number of ranks)",
        update_batches, ranks));
  }
}

data::EpochPlan& BatchStream::plan(std::int64_t epoch) {
  if (!plan_ || plan_->epoch() != epoch) {
    plan_.emplace(batcher_, epoch);
    if (plan_->batch(0) == nullptr) {
      throw std::runtime_error("no training batches: is the train split empty?");
    }
  }
  return *plan_;
}

bool BatchStream::update_fits(std::int64_t epoch, std::int64_t first) {
  return plan(epoch).batch(first + update_batches_ - 1) != nullptr;
}

BatchStream::Prepared BatchStream::prepare(Cursor at) {
  auto& update = at.update;
  while (!update_fits(update.epoch, update.batch_in_epoch)) {
    if (update.batch_in_epoch == 0) {
      throw std::runtime_error(
          fmt::format("an epoch has fewer batches than the {} of one update (train.update_batches)",
                      update_batches_));
    }
    ++update.epoch;
    update.batch_in_epoch = 0;
  }
  Prepared p;
  p.at = at;
  p.index_in_update = rank_ * per_rank_ + at.part;
  p.batch =
      batcher_.make_batch(*plan(update.epoch).batch(update.batch_in_epoch + p.index_in_update));
  p.after = {update, at.part + 1};
  if (p.after.part == per_rank_) {  // the update's last batch: the next update, maybe next epoch
    p.after = {{update.epoch, update.batch_in_epoch + update_batches_}, 0};
    if (!update_fits(update.epoch, p.after.update.batch_in_epoch)) {
      p.after.update = {update.epoch + 1, 0};
    }
  }
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
  if (!ahead_ || !(ahead_->at == cursor_)) ahead_ = prepare(cursor_);
  Prepared p = std::move(*ahead_);
  ahead_.reset();
  cursor_ = p.after;
  last_index_ = p.index_in_update;
  return std::move(p.batch);
}

void BatchStream::prefetch() {
  if (!ahead_ || !(ahead_->at == cursor_)) ahead_ = prepare(cursor_);
}

}  // namespace nmt::train
