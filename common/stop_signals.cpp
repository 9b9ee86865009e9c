#include "common/stop_signals.h"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstring>
#include <stdexcept>

namespace nmt {
namespace {

constexpr int kSignals[] = {SIGTERM, SIGINT, SIGUSR1, SIGUSR2};

std::atomic<int> g_signal{0};  // the first stop signal's number; lock-free, so signal-safe
std::atomic<bool> g_installed{false};
std::atomic<const char*> g_second_message{nullptr};  // set before the handlers are installed
struct sigaction g_previous[sizeof kSignals / sizeof kSignals[0]];

void write_stderr(const char* text) {
  const ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

extern "C" void on_stop_signal(int signo) {
  int expected = 0;
  if (g_signal.compare_exchange_strong(expected, signo)) return;
  // A second signal: the user or the scheduler will not wait for the graceful stop.
  write_stderr(g_second_message.load());
  ::_exit(128 + signo);
}

}  // namespace

int exit_code(StopReason reason) {
  switch (reason) {
    case StopReason::kPreempted:
      return kExitPreempted;
    case StopReason::kInterrupted:
      return kExitInterrupted;
    case StopReason::kUnrecorded:
      return kExitUnrecorded;
    case StopReason::kNone:
      break;
  }
  return 0;
}

const char* stop_reason_name(StopReason reason) {
  switch (reason) {
    case StopReason::kPreempted:
      return "preempted";
    case StopReason::kInterrupted:
      return "interrupted";
    case StopReason::kUnrecorded:
      return "unrecorded";
    case StopReason::kNone:
      break;
  }
  return "none";
}

StopSignals::StopSignals(const char* second_signal_message) {
  if (g_installed.exchange(true)) throw std::logic_error("StopSignals: already installed");
  g_second_message = second_signal_message;
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // a signal must not fail the I/O it interrupts
  for (std::size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i) {
    sigaction(kSignals[i], &action, &g_previous[i]);
  }
}

StopSignals::~StopSignals() {
  for (std::size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i) {
    sigaction(kSignals[i], &g_previous[i], nullptr);
  }
  g_installed = false;
}

StopReason StopSignals::requested() {
  switch (g_signal.load()) {
    case 0:
      return StopReason::kNone;
    case SIGINT:
    case SIGUSR2:
      return StopReason::kInterrupted;
    default:
      return StopReason::kPreempted;
  }
}

int StopSignals::signal_number() {
  return g_signal.load();
}

void StopSignals::clear() {
  g_signal = 0;
}

}  // namespace nmt
