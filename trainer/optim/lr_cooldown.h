#pragma once
// A linear cool-down of the learning rate at the end of a bounded run (not in the paper, whose
// schedule never ends): over the last `cooldown` fraction of the run the rate is scaled down
// linearly from 1 to 0, so that a run cut by its update count or its time budget ends in a
// minimum rather than at the inverse-square-root schedule's still high rate.
//   factor(done) = 1                            while done <= 1 - cooldown
//                = (1 - done) / cooldown         after, reaching 0 at done == 1
// `done` is the fraction of the run already behind the update (of its updates, or of its time
// budget when that runs out first); cooldown 0 leaves the schedule as it is (factor 1).

namespace nmt::optim {

double cooldown_factor(double done, double cooldown);

}  // namespace nmt::optim
