#pragma once
// What the ranks agree on at the end of every update, in the one collective that travels with it
// (a sum over ranks): the update's token counts, and the votes that decide what happens after it.
// Rank 0's clock decides the time-based votes (a checkpoint by minutes, the time budget, the run's
// done fraction), so every rank takes the same decision; a stop seen by any rank stops them all.

#include <cstdint>
#include <vector>

#include "common/stop_signals.h"
#include "trainer/distributed/communicator.h"

namespace nmt::train {

struct UpdateAgreement {
  std::int64_t tgt_tokens = 0;      // target tokens of the update (all ranks, once agreed)
  std::int64_t src_tokens = 0;      // source tokens of the update (all ranks, once agreed)
  bool checkpoint_by_time = false;  // checkpoint.every_minutes passed (rank 0's clock)
  bool preempted = false;           // SIGTERM or SIGUSR1 on some rank
  bool interrupted = false;         // SIGINT or SIGUSR2 on some rank
  bool unrecorded = false;          // rank 0's sink cannot record
  bool out_of_time = false;         // train.max_minutes spent (rank 0's clock)
  double done_fraction = 0.0;       // of the run behind this update (rank 0's; the cool-down's)

  // Sets the stop flag of `reason` (kNone sets none).
  void vote_stop(StopReason reason);
  // The agreed stop: a run that cannot record stops as such (it is not resumed blindly by a
  // requeue), and a person's interrupt wins over preemption.
  StopReason stop() const;

  // The collective's layout: one value per field, summed over ranks.
  std::vector<double> to_vector() const;
  static UpdateAgreement from_vector(const std::vector<double>& sums);
};

// Sums every rank's votes (a collective: every rank calls it once per update). A rank other than 0
// contributes no done fraction, so the agreed one is rank 0's.
UpdateAgreement agree(const UpdateAgreement& mine, const distributed::Communicator& comm);

}  // namespace nmt::train
