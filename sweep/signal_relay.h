#pragma once
// Passes the stop signals nmt-sweep receives on to the row processes it started, so a sweep stops
// the way its rows do: nmt-train finishes the update in flight, checkpoints and exits (75 for
// SIGTERM/SIGUSR1, "preempted"; 130 for SIGINT, "interrupted"), and a later nmt-sweep resumes.
//   - A stage started through a launcher (mpirun, srun) gets SIGUSR1 for SIGTERM/SIGUSR1 and
//     SIGUSR2 for SIGINT: both launchers forward those to their ranks, while mpirun kills its
//     ranks on SIGTERM and srun turns a SIGTERM of its own into a kill of its step; nmt-train
//     treats USR1 as TERM and USR2 as INT. A stage without a launcher gets the signal itself.
//   - Under Slurm a SIGTERM comes from Slurm (scancel, requeue, preemption, time limit), which
//     sends it to every process of the job, the rows' ranks included: relaying it would be a
//     second signal, which makes nmt-train exit without its checkpoint. Then SIGTERM is only
//     recorded (forward_term = false).
// One instance per process at a time; the handlers only set flags, polled by relay().

#include <sys/types.h>

#include <vector>

namespace nmt::sweep {

struct RelayTarget {
  pid_t pid;
  bool launcher;  // started through mpirun/srun: send USR1/USR2 instead of TERM/INT
};

class SignalRelay {
 public:
  explicit SignalRelay(bool forward_term);
  ~SignalRelay();
  SignalRelay(const SignalRelay&) = delete;
  SignalRelay& operator=(const SignalRelay&) = delete;

  // Sends the signals received since the last call to the targets. Cheap; call it often.
  void relay(const std::vector<RelayTarget>& targets);
  // The first stop signal received (0: none): once set, no new stage starts.
  int stop_signal() const;
  // The exit code for that stop: 75 (SIGTERM, SIGUSR1) or 130 (SIGINT); 0 without a stop.
  int exit_code() const;

 private:
  bool forward_term_;
};

}  // namespace nmt::sweep
