#pragma once
// MPI start-up and shutdown (RAII, one per process, in main). Launched by mpirun or srun; a single
// process without a launcher is a world of size 1. Before MPI_Init it chooses Open MPI's
// non-blocking all-reduce algorithm unless the user did (mpi_context.cpp says why). The
// collectives live in Communicator.

#include <stdexcept>
#include <string>

#include "trainer/distributed/communicator.h"

namespace nmt::distributed {

class MpiError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws MpiError naming `call` and MPI's message when `code` is not MPI_SUCCESS.
void check_mpi(int code, const char* call);

class MpiContext {
 public:
  MpiContext(int* argc, char*** argv);
  ~MpiContext();
  MpiContext(const MpiContext&) = delete;
  MpiContext& operator=(const MpiContext&) = delete;

  // All ranks of the job.
  Communicator& world() { return world_; }

  // The MPI library's own version string (callable before or without MPI_Init).
  static std::string library_version();

  // What was chosen for Open MPI's non-blocking all-reduce before MPI_Init, for the caller to log
  // once its logger is set up (e.g. "libnbc iallreduce algorithm 'ring'"); empty where MPI was
  // initialised elsewhere or is not Open MPI.
  const std::string& collective_choice() const { return collective_choice_; }

 private:
  std::string collective_choice_;  // before initialised_here_: init_mpi writes it
  bool initialised_here_ = false;
  Communicator world_;
};

}  // namespace nmt::distributed
