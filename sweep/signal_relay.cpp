#include "sweep/signal_relay.h"

#include <signal.h>

#include <atomic>
#include <stdexcept>

#include <spdlog/spdlog.h>

#include "common/stop_signals.h"

namespace nmt::sweep {
namespace {

constexpr int kSignals[] = {SIGTERM, SIGINT, SIGUSR1};
constexpr std::size_t kCount = sizeof kSignals / sizeof kSignals[0];

std::atomic<bool> g_pending[kCount];  // lock-free, so safe in a handler
std::atomic<int> g_first{0};
std::atomic<bool> g_installed{false};
struct sigaction g_previous[kCount];

extern "C" void on_signal(int signo) {
  for (std::size_t i = 0; i < kCount; ++i) {
    if (kSignals[i] == signo) g_pending[i] = true;
  }
  int expected = 0;
  g_first.compare_exchange_strong(expected, signo);
}

// What a stage gets for `signo`: launchers forward USR1/USR2 but not TERM/INT as nmt-train needs.
int relayed(int signo, bool launcher) {
  if (!launcher) return signo;
  return signo == SIGINT ? SIGUSR2 : SIGUSR1;
}

}  // namespace

SignalRelay::SignalRelay(bool forward_term) : forward_term_(forward_term) {
  if (g_installed.exchange(true)) throw std::logic_error("SignalRelay: already installed");
  g_first = 0;
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (std::size_t i = 0; i < kCount; ++i) {
    g_pending[i] = false;
    sigaction(kSignals[i], &action, &g_previous[i]);
  }
}

SignalRelay::~SignalRelay() {
  for (std::size_t i = 0; i < kCount; ++i) sigaction(kSignals[i], &g_previous[i], nullptr);
  g_installed = false;
}

void SignalRelay::relay(const std::vector<RelayTarget>& targets) {
  for (std::size_t i = 0; i < kCount; ++i) {
    if (!g_pending[i].exchange(false)) continue;
    const int signo = kSignals[i];
    if (signo == SIGTERM && !forward_term_) {
      spdlog::warn(
          "SIGTERM from Slurm (it signals the rows' processes itself): no row starts, "
          "waiting for the running ones to checkpoint and stop");
      continue;
    }
    spdlog::warn(
        "signal {}: passed on to {} running stage(s); no row starts; a later nmt-sweep "
        "resumes the rows",
        signo, targets.size());
    for (const auto& t : targets) ::kill(t.pid, relayed(signo, t.launcher));
  }
}

int SignalRelay::stop_signal() const {
  return g_first.load();
}

int SignalRelay::exit_code() const {
  const int signo = g_first.load();
  if (signo == 0) return 0;
  return signo == SIGINT ? kExitInterrupted : kExitPreempted;
}

}  // namespace nmt::sweep
