#include "trainer/distributed/mpi_context.h"

#include <mpi.h>

#include <fmt/format.h>

#include <cstdlib>

namespace nmt::distributed {
void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw MpiError(fmt::format("{} failed: {}", call, std::string(text, length)));
}

// MPI must be initialised before world_ is built from it, in MpiContext's initialiser list.
namespace {

// Open MPI runs MPI_Iallreduce in its libnbc component, which by default picks a binomial tree
// (reduce to rank 0, then broadcast) whenever the buffer is in place (always, here) or there are
// fewer than 4 ranks: the whole buffer crosses each link twice, one way at a time. Its ring (each
// rank sends and reduces 1/N of the buffer per step, both directions at once) matches the blocking
// MPI_Allreduce (docs/scaling.md, "Figures behind the defaults"). Set through the environment
// before MPI_Init, where Open MPI reads it; a value already there (mpirun --mca, OMPI_MCA_...)
// wins, while one in an MCA parameter file loses to the environment, so it must be given in one of
// those two ways. Returns what was chosen.
std::string choose_collective_algorithms() {
#if defined(OPEN_MPI) && OPEN_MPI
  constexpr const char* kVariable = "OMPI_MCA_coll_libnbc_iallreduce_algorithm";
  if (const char* set = std::getenv(kVariable)) {
    return fmt::format("libnbc iallreduce algorithm '{}' (set by the user)", set);
  }
  setenv(kVariable, "ring", 0);
  return "libnbc iallreduce algorithm 'ring'";
#else
  return "";
#endif
}

// Initialises MPI unless it is already; `chosen` gets choose_collective_algorithms()'s answer.
bool init_mpi(int* argc, char*** argv, std::string& chosen) {
  int already = 0;
  MPI_Initialized(&already);
  if (already) return false;
  chosen = choose_collective_algorithms();
  int provided = 0;
  // Serialized: on CUDA the gradient hooks that start all-reduces run on LibTorch's device
  // threads, one at a time and never alongside the main thread's MPI calls.
  check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return true;
}

}  // namespace

MpiContext::MpiContext(int* argc, char*** argv)
    : initialised_here_(init_mpi(argc, argv, collective_choice_)), world_(Communicator::world()) {}

MpiContext::~MpiContext() {
  if (!initialised_here_) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

std::string MpiContext::library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  // The reported length may count the terminating NUL; keep the first line only.
  std::string version(text, static_cast<std::size_t>(length));
  return version.substr(0, version.find_first_of(std::string("\n\0", 2)));
}

}  // namespace nmt::distributed
