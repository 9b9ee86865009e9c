#pragma once
// Communicator's state, shared by its two source files: communicator.cpp (the collectives and
// their waits) and hang_reports.cpp (arrivals, heartbeats, and the reports that name a hung or
// lost rank). Private to trainer/dist.

#include <mpi.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "trainer/distributed/communicator.h"
#include "trainer/distributed/mpi_context.h"

namespace nmt::distributed {

using Clock = std::chrono::steady_clock;
inline constexpr int kArrivalTag = 7301;
inline constexpr int kHeartbeatTag = 7302;
inline constexpr std::chrono::seconds kHeartbeatEvery{1};
inline constexpr std::size_t kNameBytes = 96;

// Everything about the group. The arrival bookkeeping: before each collective, every rank sends
// its collective number to rank 0 and rank 0 sends its own to every rank; a wait that runs past
// the hang timeout checks which of those messages never came.
struct Communicator::State {
  MPI_Comm comm = MPI_COMM_SELF;
  int rank = 0, size = 1, local_rank = 0, local_size = 1;
  std::vector<std::string> names;
  bool watching = false;
  HangOptions hang;
  int long_waits = 0;
  std::int64_t step = -1;
  std::int64_t sequence = 0;  // collectives announced so far
  // A small point-to-point message in flight; its buffer lives as long as the request.
  struct Message {
    MPI_Request request = MPI_REQUEST_NULL;
    int from = -1;  // the sender, for receives; -1 for sends
    std::int64_t value = 0;
    bool seen = false;  // a receive found complete: counts as hearing from the sender
  };
  using Messages = std::vector<std::unique_ptr<Message>>;
  Messages arrivals;   // of the current collective: sends, and receives from each peer
  Messages lingering;  // earlier messages not completed yet (never waited for: a peer may hang)
  Messages beats;      // heartbeats sent, not completed yet
  // All-reduce pieces, started strictly in the order they were queued: MPI requires the same
  // order of collectives on every rank, and when a piece starts depends on local timing.
  struct Piece {
    char* data = nullptr;
    int count = 0;
    MPI_Datatype type = MPI_DATATYPE_NULL;
    std::shared_ptr<std::size_t> left;  // its all-reduce's pieces not completed yet
  };
  std::deque<Piece> queued;
  std::vector<MPI_Request> flying;  // started pieces, with their all-reduce's count alongside
  std::vector<std::shared_ptr<std::size_t>> flying_left;
  std::vector<int> landed;  // MPI_Testsome's indices, kept to spare an allocation per test
  std::string what;
  double wait_seconds = 0.0;
  Clock::time_point last_beat{}, last_drain{};
  std::vector<Clock::time_point> last_heard;  // per rank: its latest heartbeat (rank 0 and peers)

  // A LongWait is the others waiting for rank 0's solo work. Rank 0 itself keeps the short
  // limit: the others have nothing to do but arrive, so one that does not is hung.
  double limit() const {
    return long_waits > 0 && rank != 0 ? hang.long_timeout_s : hang.timeout_s;
  }
  void announce(const char* label);
  // Before a collective other than an all-reduce: queued all-reduce pieces start first, so the
  // collectives start in the same order on every rank.
  void begin(const char* label) {
    advance(queued.size() + flying.size());
    announce(label);
  }
  void wait(MPI_Request* requests, int count, const char* label);
  template <typename Done>
  void wait_until(Done&& done);
  void advance(std::size_t in_flight);
  bool arrived(Message& m);
  std::vector<std::string> silent_peers(double silence_s);
  void abort_if_silent(double waited_s, double silence_s);
  void overdue(double waited_s);
  void pulse();
  static void forget_completed(Messages& messages) {
    for (auto& m : messages) {
      int done = 0;
      check_mpi(MPI_Test(&m->request, &done, MPI_STATUS_IGNORE), "MPI_Test(message)");
      if (done) m.reset();
    }
    messages.erase(std::remove(messages.begin(), messages.end(), nullptr), messages.end());
  }
  double silent_seconds(int r) const {
    return std::chrono::duration<double>(Clock::now() - last_heard[static_cast<std::size_t>(r)])
        .count();
  }
  // The collective being waited for, for hang reports.
  std::string where(double waited_s) const {
    return fmt::format("collective '{}' #{} at step {}, waited {:.0f} s", what, sequence, step,
                       waited_s);
  }
  std::string describe(int r) const {
    return fmt::format("rank {} ({})", r, r < static_cast<int>(names.size()) ? names[r] : "?");
  }
  std::string host_of(int r) const {  // names are "host:pid"
    if (r < 0 || r >= static_cast<int>(names.size())) return "?";
    const auto& name = names[static_cast<std::size_t>(r)];
    return name.substr(0, name.rfind(':'));
  }
};

}  // namespace nmt::distributed
