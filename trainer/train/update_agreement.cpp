#include "trainer/train/update_agreement.h"

#include <stdexcept>

namespace nmt::train {
namespace {

constexpr std::size_t kFields = 8;

double flag(bool b) {
  return b ? 1.0 : 0.0;
}

}  // namespace

void UpdateAgreement::vote_stop(StopReason reason) {
  preempted = reason == StopReason::kPreempted;
  interrupted = reason == StopReason::kInterrupted;
  unrecorded = reason == StopReason::kUnrecorded;
}

StopReason UpdateAgreement::stop() const {
  if (unrecorded) return StopReason::kUnrecorded;
  if (interrupted) return StopReason::kInterrupted;
  return preempted ? StopReason::kPreempted : StopReason::kNone;
}

std::vector<double> UpdateAgreement::to_vector() const {
  return {static_cast<double>(tgt_tokens),
          static_cast<double>(src_tokens),
          flag(checkpoint_by_time),
          flag(preempted),
          flag(interrupted),
          flag(out_of_time),
          done_fraction,
          flag(unrecorded)};
}

UpdateAgreement UpdateAgreement::from_vector(const std::vector<double>& sums) {
  if (sums.size() != kFields) {
    throw std::invalid_argument("UpdateAgreement::from_vector: expected 8 values");
  }
  UpdateAgreement v;
  v.tgt_tokens = static_cast<std::int64_t>(sums[0]);
  v.src_tokens = static_cast<std::int64_t>(sums[1]);
  v.checkpoint_by_time = sums[2] > 0;
  v.preempted = sums[3] > 0;
  v.interrupted = sums[4] > 0;
  v.out_of_time = sums[5] > 0;
  v.done_fraction = sums[6];
  v.unrecorded = sums[7] > 0;
  return v;
}

UpdateAgreement agree(const UpdateAgreement& mine, const distributed::Communicator& comm) {
  UpdateAgreement contribution = mine;
  if (!comm.is_root()) contribution.done_fraction = 0.0;
  auto sums = contribution.to_vector();
  comm.allreduce_sum(sums);
  return UpdateAgreement::from_vector(sums);
}

}  // namespace nmt::train
