#include "trainer/dist/mpi_context.h"

#include <mpi.h>

#include <fmt/format.h>
#include <climits>
#include <cstdlib>

namespace nmt::dist {
namespace {

void check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  throw MpiError(fmt::format("{} failed: {}", call, std::string(text, length)));
}

int checked_count(std::size_t count) {
  if (count > static_cast<std::size_t>(INT_MAX)) {
    throw MpiError(fmt::format("MPI message of {} elements exceeds INT_MAX; split it", count));
  }
  return static_cast<int>(count);
}

}  // namespace

MpiContext::MpiContext(int* argc, char*** argv) {
  int already = 0;
  MPI_Initialized(&already);
  if (!already) {
    int provided = 0;
    // Only the main thread calls MPI; helper threads (data loading, tracker client) never do.
    check(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
    initialised_here_ = true;
  }
  check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check(MPI_Comm_rank(MPI_COMM_WORLD, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &size_), "MPI_Comm_size");
}

MpiContext::~MpiContext() {
  if (!initialised_here_) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void MpiContext::allreduce_sum(std::vector<double>& values) const {
  check(MPI_Allreduce(MPI_IN_PLACE, values.data(), checked_count(values.size()), MPI_DOUBLE,
                      MPI_SUM, MPI_COMM_WORLD),
        "MPI_Allreduce(double)");
}

void MpiContext::allreduce_sum(std::vector<float>& values) const {
  allreduce_sum(values.data(), values.size());
}

void MpiContext::allreduce_sum(float* values, std::size_t count) const {
  check(
      MPI_Allreduce(MPI_IN_PLACE, values, checked_count(count), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
      "MPI_Allreduce(float)");
}

void MpiContext::allreduce_sum(std::vector<std::int64_t>& values) const {
  check(MPI_Allreduce(MPI_IN_PLACE, values.data(), checked_count(values.size()), MPI_INT64_T,
                      MPI_SUM, MPI_COMM_WORLD),
        "MPI_Allreduce(int64)");
}

void MpiContext::broadcast(std::vector<float>& values, int root) const {
  check(MPI_Bcast(values.data(), checked_count(values.size()), MPI_FLOAT, root, MPI_COMM_WORLD),
        "MPI_Bcast(float)");
}

void MpiContext::broadcast(std::string& text, int root) const {
  std::uint64_t length = text.size();
  check(MPI_Bcast(&length, 1, MPI_UINT64_T, root, MPI_COMM_WORLD), "MPI_Bcast(length)");
  text.resize(length);
  check(MPI_Bcast(text.data(), checked_count(length), MPI_CHAR, root, MPI_COMM_WORLD),
        "MPI_Bcast(string)");
}

void MpiContext::barrier() const {
  check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

void MpiContext::abort(int code) const {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::abort();  // MPI_Abort does not return; this satisfies [[noreturn]].
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
