#pragma once
// A group of MPI ranks and the collectives data-parallel training needs. Every wait polls with a
// deadline instead of blocking inside MPI, so a rank whose peer hangs does not hang with it: once
// armed (watch_for_hangs), a wait longer than the hang timeout aborts the whole job with a message
// naming the rank that never arrived (see announce_step), and mpirun exits non-zero.
// Collectives must be called in the same order on every rank, as with MPI itself.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace nmt::distributed {

enum class ElementType { kFloat32, kFloat64, kInt64 };

struct HangOptions {
  double timeout_s = 45.0;       // waiting this long on peers is a hang
  double root_grace_s = 10.0;    // other ranks wait this much longer, so rank 0 names the culprit
  double long_timeout_s = 1800;  // the limit inside a LongWait (rank 0 alone saves or decodes)
};

class Communicator {
 public:
  // All ranks of the job (MPI must be initialised, see MpiContext); or this process alone.
  static Communicator world();
  static Communicator self();

  int rank() const;
  int size() const;
  bool is_root() const { return rank() == 0; }
  // Rank among the ranks on this node, and their count: the GPU a rank drives.
  int local_rank() const;
  int local_size() const;
  // "host:pid" of every rank, gathered once.
  const std::vector<std::string>& rank_names() const;
  // The host of rank r (its name without the pid), and the distinct hosts, rank 0's first.
  std::string host_of(int r) const;
  std::vector<std::string> hosts() const;

  // Element-wise sums over all ranks, in place.
  void allreduce_sum(std::vector<double>& values) const;
  void allreduce_sum(std::vector<float>& values) const;
  void allreduce_sum(std::vector<std::int64_t>& values) const;
  void allreduce_sum(void* data, std::size_t count, ElementType type) const;

  // Copies root's buffer to every rank; sizes must already agree.
  void broadcast(void* data, std::size_t bytes, int root = 0) const;
  void broadcast(std::vector<float>& values, int root = 0) const;
  void broadcast(std::string& text, int root = 0) const;
  std::vector<double> gather(double value, int root = 0) const;  // meaningful on root
  void barrier() const;

  // A started all-reduce (sum, in place) that completes in wait_all or when test says so. Above
  // 4 MiB it runs as a chain of 1 MiB pieces, started in order behind those of earlier all-reduces
  // and advanced by test and wait_all; the buffer must stay alive and untouched until it completes.
  class Request {
   public:
    Request();
    ~Request();
    Request(Request&&) noexcept;
    Request& operator=(Request&&) noexcept;
    bool pending() const;

   private:
    friend class Communicator;
    struct Handle;
    std::unique_ptr<Handle> handle_;
  };
  Request start_allreduce_sum(void* data, std::size_t count, ElementType type) const;
  bool test(Request& request) const;  // also drives MPI's progress
  void wait_all(std::vector<Request>& requests, const char* what) const;

  // Arms hang detection for the collectives that follow.
  void watch_for_hangs(HangOptions options);
  // The training step that hang reports name. Before each collective every rank tells rank 0
  // (and rank 0 tells every rank) that it got there, so a wait that times out can name the ranks
  // that did not.
  void set_step(std::int64_t step);

  // While alive, the ranks other than 0 wait up to HangOptions::long_timeout_s: rank 0 alone
  // works and they wait for it. Rank 0 keeps the short limit (the others only have to arrive),
  // and once rank 0 has arrived, its silence past the short limit is a hang.
  class LongWait {
   public:
    explicit LongWait(const Communicator& comm);
    ~LongWait();
    LongWait(const LongWait&) = delete;
    LongWait& operator=(const LongWait&) = delete;

   private:
    const Communicator& comm_;
  };

  // Ends every rank of the job at once, after logging `message` as critical and calling the
  // abort hook (if set) with it.
  [[noreturn]] static void abort_job(const std::string& message, int code = 3);
  // Called by abort_job before the job ends, on the aborting rank: a last chance to record why
  // (rank 0 marks its tracked run failed). It must not throw and should finish in a few seconds.
  static void set_abort_hook(std::function<void(const std::string& message)> hook);

  // Seconds spent waiting in collectives since the last call (then reset).
  double take_wait_seconds() const;
  // Whether the MPI library can read CUDA device memory (Open MPI's run-time query).
  static bool cuda_aware();

 private:
  struct State;
  explicit Communicator(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

}  // namespace nmt::distributed
