#include "trainer/train/schedule.h"

#include <algorithm>

namespace nmt::train {

Schedule::Schedule(const TrainConfig& train, const CheckpointConfig& checkpoint, bool validation,
                   int ranks, Clock::time_point now)
    : train_(train),
      checkpoints_(checkpoint, train.max_steps, now),
      validation_(validation),
      ranks_(ranks),
      run_start_(now) {}

void Schedule::start(double elapsed_before, Clock::time_point now) {
  run_start_ = now;
  elapsed_before_ = elapsed_before;
  if (train_.max_minutes > 0 && elapsed_before_ >= train_.max_minutes * 60.0) {
    ending_.out_of_time = true;
  }
}

bool Schedule::running(std::int64_t step) const {
  return step < train_.max_steps && !ending_.early_stopped && !ending_.out_of_time &&
         ending_.stopped == StopReason::kNone;
}

double Schedule::elapsed_seconds(Clock::time_point now) const {
  return elapsed_before_ + std::chrono::duration<double>(now - run_start_).count();
}

double Schedule::done_fraction(std::int64_t step, Clock::time_point now) const {
  const double steps = static_cast<double>(step) / static_cast<double>(train_.max_steps);
  if (train_.max_minutes <= 0) return steps;
  const double time = elapsed_seconds(now) / (train_.max_minutes * 60.0);
  return std::min(1.0, std::max(steps, time));
}

bool Schedule::out_of_time(Clock::time_point now) const {
  const double budget = train_.max_minutes;
  return budget > 0 && elapsed_seconds(now) >= budget * 60.0;
}

bool Schedule::checkpoint_time_is_up(Clock::time_point now) const {
  return checkpoints_.time_is_up(now);
}

bool Schedule::last(std::int64_t step, const UpdateAgreement& votes) const {
  return step == train_.max_steps || votes.out_of_time;
}

bool Schedule::due(std::int64_t every, std::int64_t step, const UpdateAgreement& votes) const {
  return every > 0 && (step % every == 0 || last(step, votes));
}

bool Schedule::log(std::int64_t step, const UpdateAgreement& votes) const {
  return step % train_.log_every == 0 || last(step, votes) || votes.stop() != StopReason::kNone;
}

bool Schedule::validate(std::int64_t step, const UpdateAgreement& votes) const {
  return validation_ && due(train_.validate_every, step, votes);
}

bool Schedule::validate_bleu(std::int64_t step, const UpdateAgreement& votes) const {
  return validation_ && due(train_.valid_bleu_every, step, votes) &&
         votes.stop() == StopReason::kNone;
}

bool Schedule::record_validation(ValidationRecord& record, double nll) {
  const bool best = train::record_validation(record, nll);
  ending_.early_stopped = should_stop_early(record, train_.early_stopping);
  return best;
}

bool Schedule::checkpoint(std::int64_t step, const UpdateAgreement& votes,
                          Clock::time_point now) const {
  const bool by_time = ranks_ > 1 ? votes.checkpoint_by_time : checkpoints_.time_is_up(now);
  const bool ending =
      ending_.early_stopped || votes.out_of_time || votes.stop() != StopReason::kNone;
  return checkpoints_.due(step, by_time, ending);
}

const Ending& Schedule::conclude(std::int64_t step, const UpdateAgreement& votes) {
  if (step >= train_.max_steps) return ending_;
  if (votes.out_of_time) ending_.out_of_time = true;
  if (votes.stop() != StopReason::kNone && !ending_.early_stopped && !ending_.out_of_time) {
    ending_.stopped = votes.stop();
  }
  return ending_;
}

}  // namespace nmt::train
