// Gradient all-reduce bandwidth on this machine, run under mpirun -np N: for bucket-sized float32
// buffers, the time of Communicator::allreduce_sum (the trainer's path: non-blocking collective,
// polled, with hang detection armed) against a plain blocking MPI_Allreduce (the library it wraps),
// side by side. Bus bandwidth = bytes x 2(N-1)/N / time, the figure a ring all-reduce is limited
// by; docs/scaling.md plugs it into the cost model.
//   mpirun -np 2 build/bench/allreduce_bench

#include <mpi.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "trainer/dist/mpi_context.h"

namespace {

using Clock = std::chrono::steady_clock;

template <typename F>
double best_seconds(const nmt::dist::Communicator& comm, int repeats, F&& reduce) {
  double best = 1e30;
  for (int i = 0; i < repeats; ++i) {
    comm.barrier();
    const auto start = Clock::now();
    reduce();
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::vector<double> slowest = {seconds};
    comm.allreduce_sum(slowest);  // summed; divide for the mean over ranks
    best = std::min(best, slowest[0] / comm.size());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  nmt::dist::MpiContext mpi(&argc, &argv);
  auto& comm = mpi.world();
  comm.watch_for_hangs(nmt::dist::HangOptions{});
  const int n = comm.size();
  const double ring = 2.0 * (n - 1) / std::max(n, 1);
  if (comm.is_root()) {
    fmt::print("{} ranks; float32 sum; best of 5; bus bandwidth = bytes x 2(N-1)/N / time\n", n);
    fmt::print("{:>10} {:>14} {:>14} {:>12} {:>12} {:>8}\n", "MiB", "trainer ms", "MPI ms",
               "trainer GB/s", "MPI GB/s", "ratio");
  }
  for (const double mib : {0.25, 1.0, 4.0, 16.0, 64.0, 256.0}) {
    const auto count = static_cast<std::size_t>(mib * 1024 * 1024 / sizeof(float));
    std::vector<float> a(count, 1.0f), b(count, 1.0f);
    const double ours = best_seconds(comm, 5, [&] { comm.allreduce_sum(a); });
    const double raw = best_seconds(comm, 5, [&] {
      MPI_Allreduce(MPI_IN_PLACE, b.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                    MPI_COMM_WORLD);
    });
    const double bytes = static_cast<double>(count * sizeof(float));
    if (comm.is_root()) {
      fmt::print("{:>10.2f} {:>14.3f} {:>14.3f} {:>12.2f} {:>12.2f} {:>8.2f}\n", mib, 1e3 * ours,
                 1e3 * raw, ring * bytes / ours / 1e9, ring * bytes / raw / 1e9, raw / ours);
    }
  }
  return 0;
}
