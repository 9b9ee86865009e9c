#include "trainer/dist/mpi_context.h"

#include <mpi.h>

#include <fmt/format.h>
#include <cstdlib>

namespace nmt::dist {
void check_mpi(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw MpiError(fmt::format("{} failed: {}", call, std::string(text, length)));
}

// MPI must be initialised before world_ is built from it, in MpiContext's initialiser list.
namespace {
bool init_mpi(int* argc, char*** argv) {
  int already = 0;
  MPI_Initialized(&already);
  if (already) return false;
  int provided = 0;
  // Serialized: on CUDA the gradient hooks that start all-reduces run on LibTorch's device
  // threads, one at a time and never alongside the main thread's MPI calls.
  check_mpi(MPI_Init_thread(argc, argv, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  return true;
}
}  // namespace

MpiContext::MpiContext(int* argc, char*** argv)
    : initialised_here_(init_mpi(argc, argv)), world_(Communicator::world()) {}

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

}  // namespace nmt::dist
