#pragma once
// The MPI side of data-parallel training: process start-up and shutdown (RAII), and the
// collectives the trainer needs. Launched by mpirun or srun; a single process without a launcher
// is a world of size 1. MPI errors become exceptions naming the call, so main can log them and the
// launcher sees a non-zero exit.

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace nmt::dist {

class MpiError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Initialises MPI on construction and finalises it on destruction. One per process, in main.
class MpiContext {
 public:
  MpiContext(int* argc, char*** argv);
  ~MpiContext();
  MpiContext(const MpiContext&) = delete;
  MpiContext& operator=(const MpiContext&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  bool is_root() const { return rank_ == 0; }

  // Element-wise sums over all ranks, in place.
  void allreduce_sum(std::vector<double>& values) const;
  void allreduce_sum(std::vector<float>& values) const;
  void allreduce_sum(std::vector<std::int64_t>& values) const;
  void allreduce_sum(float* values, std::size_t count) const;

  // Copies root's buffer to every rank; sizes must already agree.
  void broadcast(std::vector<float>& values, int root = 0) const;
  void broadcast(std::string& text, int root = 0) const;

  void barrier() const;

  // Ends every rank of the job at once; for fatal errors on one rank.
  [[noreturn]] void abort(int code) const;

  // The MPI library's own version string (callable before or without MPI_Init).
  static std::string library_version();

 private:
  int rank_ = 0;
  int size_ = 1;
  bool initialised_here_ = false;
};

}  // namespace nmt::dist
