// Stop signals: each signal maps to its stop reason and exit code; a second signal ends the
// process at once with 128 + signal.

#include "common/stop_signals.h"

#include <gtest/gtest.h>

#include <csignal>

namespace nmt {
namespace {

TEST(StopSignals, EachSignalRequestsItsStop) {
  StopSignals signals;
  const std::pair<int, StopReason> cases[] = {{SIGTERM, StopReason::kPreempted},
                                              {SIGUSR1, StopReason::kPreempted},
                                              {SIGINT, StopReason::kInterrupted},
                                              {SIGUSR2, StopReason::kInterrupted}};
  for (const auto& [signo, reason] : cases) {
    StopSignals::clear();
    EXPECT_EQ(StopSignals::requested(), StopReason::kNone);
    std::raise(signo);  // handled: the process goes on
    EXPECT_EQ(StopSignals::requested(), reason) << signo;
    EXPECT_EQ(StopSignals::signal_number(), signo);
  }
  StopSignals::clear();
  EXPECT_EQ(exit_code(StopReason::kPreempted), 75);
  EXPECT_EQ(exit_code(StopReason::kInterrupted), 130);
  EXPECT_EQ(exit_code(StopReason::kNone), 0);
}

TEST(StopSignals, ASecondSignalExitsAtOnce) {
  EXPECT_EXIT(
      {
        StopSignals signals;
        std::raise(SIGTERM);
        std::raise(SIGINT);
        std::_Exit(0);  // not reached
      },
      ::testing::ExitedWithCode(128 + SIGINT), "second stop signal");
}

TEST(StopSignals, PreviousHandlersComeBack) {
  struct sigaction before {};
  sigaction(SIGUSR1, nullptr, &before);
  { StopSignals signals; }
  struct sigaction after {};
  sigaction(SIGUSR1, nullptr, &after);
  EXPECT_EQ(before.sa_handler, after.sa_handler);
  StopSignals again;  // a second instance after the first is gone is fine
}

}  // namespace
}  // namespace nmt
