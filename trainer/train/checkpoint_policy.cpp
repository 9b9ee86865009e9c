#include "trainer/train/checkpoint_policy.h"

namespace nmt::train {

CheckpointPolicy::CheckpointPolicy(const CheckpointConfig& config, std::int64_t max_steps,
                                   Clock::time_point start)
    : config_(config), max_steps_(max_steps), last_save_(start) {}

bool CheckpointPolicy::time_is_up(Clock::time_point now) const {
  return config_.every_minutes > 0 &&
         std::chrono::duration<double>(now - last_save_).count() >= 60.0 * config_.every_minutes;
}

bool CheckpointPolicy::due(std::int64_t step, bool time_is_up, bool stopping_early) const {
  const bool by_steps = config_.every_steps > 0 && step % config_.every_steps == 0;
  return by_steps || time_is_up || step == max_steps_ || stopping_early;
}

bool record_validation(ValidationRecord& record, double nll) {
  if (nll < record.best_nll) {
    record.best_nll = nll;
    record.without_improvement = 0;
    return true;
  }
  ++record.without_improvement;
  return false;
}

bool should_stop_early(const ValidationRecord& record, std::int64_t patience) {
  return patience > 0 && record.without_improvement >= patience;
}

}  // namespace nmt::train
