#pragma once
// The count of an event that may come by the thousand (refused connections, evictions, failed TLS
// handshakes) and the pace of its log line: at most one a second, each with the count so far, so
// that a flood neither fills the log nor goes unseen.

#include <chrono>
#include <cstdint>

namespace nmt::tracker {

class LogThrottle {
 public:
  // Counts one more event. True when it is to be logged: nothing was logged in the last second.
  bool note() {
    ++count_;
    const auto now = std::chrono::steady_clock::now();
    if (now - logged_ < std::chrono::seconds(1)) return false;
    logged_ = now;
    return true;
  }
  std::uint64_t count() const { return count_; }

 private:
  std::uint64_t count_ = 0;
  std::chrono::steady_clock::time_point logged_{};
};

}  // namespace nmt::tracker
