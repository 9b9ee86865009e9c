#pragma once
// Graceful stop on the signals a cluster sends. Slurm's scancel, preemption and `scontrol requeue`
// send SIGTERM (then SIGKILL after KillWait); a batch script's time-limit warning arrives as
// SIGUSR1 (`--signal=B:USR1@180`, forwarded by the script); mpirun forwards SIGUSR1/SIGUSR2 but
// kills its ranks on SIGTERM, so jobs/train_mpirun.sh turns TERM into USR1 and INT into USR2.
// The handlers only record the request; long work polls requested() at a safe boundary (nmt-train:
// the end of an update), saves what it must and exits with exit_code(). A second signal while a
// stop is pending ends the process at once (exit 128 + signal), for a user who will not wait.

namespace nmt {

enum class StopReason {
  kNone,
  kPreempted,    // SIGTERM, SIGUSR1: the job will be resumed (requeue, time limit, preemption)
  kInterrupted,  // SIGINT (Ctrl-C), SIGUSR2: a person stopped it
  kUnrecorded,   // not a signal: a run file (metrics.jsonl) cannot be written (a full disk)
};

// Documented exit codes of a graceful stop (README, docs/slurm.md).
constexpr int kExitPreempted = 75;     // EX_TEMPFAIL: state saved, resume with --resume
constexpr int kExitInterrupted = 130;  // the shell's code for SIGINT: state saved
constexpr int kExitUnrecorded = 74;    // EX_IOERR: stopped because records failed
int exit_code(StopReason reason);      // 0 for kNone
// "none", "preempted", "interrupted", "unrecorded"
const char* stop_reason_name(StopReason reason);

// Installs the handlers for SIGTERM, SIGINT, SIGUSR1 and SIGUSR2 while alive and restores the
// previous ones on destruction. One instance per process at a time. `second_signal_message`
// (a string literal: the handler writes it as it is) is printed when a second signal ends the
// process, saying what the tool leaves undone.
class StopSignals {
 public:
  explicit StopSignals(const char* second_signal_message =
                           "second stop signal: exiting now, without a checkpoint\n");
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // What the first signal asked for (kNone before any); async-signal-safe state, cheap to poll.
  static StopReason requested();
  // That signal's number (0 before any), for the log line.
  static int signal_number();
  // Forgets a request (tests).
  static void clear();
};

}  // namespace nmt
