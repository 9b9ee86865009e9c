// Communicator's hang detection: before each collective every rank tells rank 0 (and rank 0
// every rank) that it arrived; while waiting, ranks exchange heartbeats; a wait past the limit
// names the ranks that never arrived or fell silent, and their hosts, and aborts the job.

#include <fmt/format.h>

#include <set>
#include <string>
#include <vector>

#include "trainer/distributed/communicator_state.h"

namespace nmt::distributed {

void Communicator::State::announce(const char* label) {
  what = label;
  if (!watching || size == 1) return;
  for (auto& m : arrivals) lingering.push_back(std::move(m));
  arrivals.clear();
  forget_completed(lingering);
  ++sequence;
  const int peers = rank == 0 ? size - 1 : 1;
  for (int i = 0; i < peers; ++i) {
    const int peer = rank == 0 ? i + 1 : 0;
    auto recv = std::make_unique<Message>();
    recv->from = peer;
    check_mpi(MPI_Irecv(&recv->value, 1, MPI_INT64_T, peer, kArrivalTag, comm, &recv->request),
              "MPI_Irecv(arrival)");
    arrivals.push_back(std::move(recv));
    auto send = std::make_unique<Message>();
    send->value = sequence;
    check_mpi(MPI_Isend(&send->value, 1, MPI_INT64_T, peer, kArrivalTag, comm, &send->request),
              "MPI_Isend(arrival)");
    arrivals.push_back(std::move(send));
  }
}

// While a rank waits it sends a heartbeat every second (to rank 0; rank 0 to every rank) and
// notes the heartbeats it receives: a rank that arrived at a collective and then stopped (frozen,
// or stuck inside MPI) falls silent, and the wait that times out can name it.
void Communicator::State::pulse() {
  if (!watching || size == 1) return;
  const auto now = Clock::now();
  if (now - last_beat >= kHeartbeatEvery) {
    last_beat = now;
    forget_completed(beats);
    // Never blocking: a frozen peer must not freeze this rank. Few beats pile up meanwhile.
    if (beats.size() < 16 * static_cast<std::size_t>(size)) {
      for (int peer = 0; peer < size; ++peer) {
        if (peer == rank || (rank != 0 && peer != 0)) continue;
        auto beat = std::make_unique<Message>();
        beat->value = sequence;
        check_mpi(
            MPI_Isend(&beat->value, 1, MPI_INT64_T, peer, kHeartbeatTag, comm, &beat->request),
            "MPI_Isend(heartbeat)");
        beats.push_back(std::move(beat));
      }
    }
  }
  if (now - last_drain < std::chrono::milliseconds(10)) return;
  last_drain = now;
  for (;;) {
    int pending = 0;
    MPI_Status status;
    check_mpi(MPI_Iprobe(MPI_ANY_SOURCE, kHeartbeatTag, comm, &pending, &status),
              "MPI_Iprobe(heartbeat)");
    if (!pending) break;
    std::int64_t sequence_there = 0;
    check_mpi(MPI_Recv(&sequence_there, 1, MPI_INT64_T, status.MPI_SOURCE, kHeartbeatTag, comm,
                       MPI_STATUS_IGNORE),
              "MPI_Recv(heartbeat)");
    last_heard[static_cast<std::size_t>(status.MPI_SOURCE)] = now;
  }
  for (auto& m : arrivals) {
    if (m->from >= 0 && !m->seen) arrived(*m);  // notes when each peer got here
  }
}

// Whether the peer's arrival message for the current collective came. The moment it is first
// found counts as hearing from the peer, so a heartbeat not drained yet cannot make it look silent.
bool Communicator::State::arrived(Message& m) {
  int done = 0;
  check_mpi(MPI_Test(&m.request, &done, MPI_STATUS_IGNORE), "MPI_Test(arrival)");
  if (done && !m.seen) {
    m.seen = true;
    auto& heard = last_heard[static_cast<std::size_t>(m.from)];
    heard = std::max(heard, Clock::now());
  }
  return done != 0;
}

// The peers that arrived at the current collective and then fell silent: frozen inside it.
std::vector<std::string> Communicator::State::silent_peers(double silence_s) {
  std::vector<std::string> silent;
  for (auto& m : arrivals) {
    if (m->from >= 0 && arrived(*m) && silent_seconds(m->from) > silence_s) {
      silent.push_back(
          fmt::format("{} (silent for {:.0f} s)", describe(m->from), silent_seconds(m->from)));
    }
  }
  return silent;
}

void Communicator::State::abort_if_silent(double waited_s, double silence_s) {
  const auto silent = silent_peers(silence_s);
  if (silent.empty()) return;
  std::set<std::string> hosts;
  for (auto& m : arrivals) {
    if (m->from >= 0 && m->seen && silent_seconds(m->from) > silence_s)
      hosts.insert(host_of(m->from));
  }
  Communicator::abort_job(
      fmt::format("{} arrived but stopped responding ({}): it is hung; host(s) "
                  "{}; aborting the job from {}",
                  fmt::join(silent, ", "), where(waited_s), fmt::join(hosts, ", "), describe(rank)),
      3);
}

// Called from a wait past the limit. Rank 0 names the ranks that never announced this
// collective and aborts; other ranks name rank 0 when it is the one missing, and otherwise give
// rank 0 a grace period to report before aborting themselves.
void Communicator::State::overdue(double waited_s) {
  // Never arrived: hung before the collective. Arrived, then silent: frozen inside it.
  const double silence_s = std::min(5.0, 0.5 * hang.timeout_s);
  std::vector<std::string> missing;
  std::set<std::string> hosts;
  for (auto& m : arrivals) {
    if (m->from >= 0 && !arrived(*m)) {
      missing.push_back(describe(m->from));
      hosts.insert(host_of(m->from));
    }
  }
  if (!missing.empty()) {
    // A node cut off or lost splits its ranks: those whose arrival got through before it went
    // fell silent instead. One report names them all, and their hosts.
    std::vector<std::string> silent;
    for (auto& m : arrivals) {
      if (m->from >= 0 && m->seen && silent_seconds(m->from) > silence_s) {
        silent.push_back(describe(m->from));
        hosts.insert(host_of(m->from));
      }
    }
    Communicator::abort_job(
        fmt::format("{} never arrived ({}): it is hung or far behind{}; host(s) {}; aborting the "
                    "job from {}",
                    fmt::join(missing, ", "), where(waited_s),
                    silent.empty() ? std::string()
                                   : fmt::format("; {} arrived, then fell silent for over {:.0f} s",
                                                 fmt::join(silent, ", "), silence_s),
                    fmt::join(hosts, ", "), describe(rank)),
        3);
  }
  abort_if_silent(waited_s, silence_s);
  if (rank == 0) {
    Communicator::abort_job(
        fmt::format("every rank arrived but {} did not complete; aborting the job",
                    where(waited_s)),
        3);
  }
  if (waited_s > limit() + hang.root_grace_s) {
    Communicator::abort_job(fmt::format("{}: rank 0 arrived but did not report the hung rank; "
                                        "aborting the job from {}",
                                        where(waited_s), describe(rank)),
                            3);
  }
}

}  // namespace nmt::distributed
