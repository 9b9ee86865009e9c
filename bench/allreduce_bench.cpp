// Gradient all-reduce bandwidth on this machine, run under mpirun -np N: for bucket-sized float32
// buffers, the time of Communicator::allreduce_sum (the trainer's path: non-blocking collective,
// polled, with hang detection armed) against a plain blocking MPI_Allreduce (the library it wraps),
// side by side. Bus bandwidth = bytes x 2(N-1)/N / time, the figure a ring all-reduce is limited
// by; docs/scaling.md plugs it into the cost model. A second table times the gradient reducer's
// pattern: 25 MiB buckets (dist.bucket_mb) started one after another and waited for together,
// against one blocking MPI_Allreduce per bucket.
//   mpirun -np 2 build/bench/allreduce_bench

#include <mpi.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "common/thread_pools.h"
#include "trainer/distributed/mpi_context.h"

namespace {

using Clock = std::chrono::steady_clock;
using nmt::distributed::Communicator;
constexpr int kRepeats = 7;
constexpr std::size_t kBucketFloats = std::size_t{25} << 20 >> 2;  // dist.bucket_mb 25

// One timed call, averaged over the ranks.
template <typename F>
double seconds(const Communicator& comm, F&& reduce) {
  comm.barrier();
  const auto start = Clock::now();
  reduce();
  std::vector<double> mean = {std::chrono::duration<double>(Clock::now() - start).count()};
  comm.allreduce_sum(mean);  // summed; divide for the mean over ranks
  return mean[0] / comm.size();
}

}  // namespace

int main(int argc, char** argv) {
  nmt::settle_openmp_waiting(argv);  // before MPI_Init: it may run the process again
  nmt::distributed::MpiContext mpi(&argc, &argv);
  auto& comm = mpi.world();
  comm.watch_for_hangs(nmt::distributed::HangOptions{});
  const int n = comm.size();
  const double ring = 2.0 * (n - 1) / std::max(n, 1);
  if (comm.is_root()) {
    fmt::print(
        "{} ranks; float32 sum; best of {}, alternating; bus bandwidth = bytes x 2(N-1)/N / time\n",
        n, kRepeats);
    fmt::print("{:>10} {:>14} {:>14} {:>12} {:>12} {:>8}\n", "MiB", "trainer ms", "MPI ms",
               "trainer GB/s", "MPI GB/s", "ratio");
  }
  for (const double mib : {0.25, 1.0, 4.0, 16.0, 64.0, 256.0}) {
    const auto count = static_cast<std::size_t>(mib * 1024 * 1024 / sizeof(float));
    std::vector<float> a(count, 1.0f), b(count, 1.0f);
    // The two alternate, so that load from other processes falls on both alike.
    double ours = 1e30, raw = 1e30;
    for (int i = 0; i < kRepeats; ++i) {
      ours = std::min(ours, seconds(comm, [&] { comm.allreduce_sum(a); }));
      raw = std::min(raw, seconds(comm, [&] {
                       MPI_Allreduce(MPI_IN_PLACE, b.data(), static_cast<int>(count), MPI_FLOAT,
                                     MPI_SUM, MPI_COMM_WORLD);
                     }));
    }
    const double bytes = static_cast<double>(count * sizeof(float));
    if (comm.is_root()) {
      fmt::print("{:>10.2f} {:>14.3f} {:>14.3f} {:>12.2f} {:>12.2f} {:>8.2f}\n", mib, 1e3 * ours,
                 1e3 * raw, ring * bytes / ours / 1e9, ring * bytes / raw / 1e9, raw / ours);
    }
  }

  if (comm.is_root()) {
    fmt::print(
        "\ngradient buckets of 25 MiB: started together and waited for (trainer), against one "
        "blocking MPI_Allreduce each\n{:>10} {:>8} {:>14} {:>14} {:>8}\n",
        "MiB", "buckets", "trainer ms", "MPI ms", "ratio");
  }
  for (const double mib : {64.0, 256.0}) {
    const auto count = static_cast<std::size_t>(mib * 1024 * 1024 / sizeof(float));
    std::vector<float> a(count, 1.0f), b(count, 1.0f);
    double ours = 1e30, raw = 1e30;
    for (int i = 0; i < kRepeats; ++i) {
      ours = std::min(ours, seconds(comm, [&] {
                        std::vector<Communicator::Request> buckets;
                        for (std::size_t at = 0; at < count; at += kBucketFloats) {
                          buckets.push_back(comm.start_allreduce_sum(
                              a.data() + at, std::min(kBucketFloats, count - at),
                              nmt::distributed::ElementType::kFloat32));
                        }
                        comm.wait_all(buckets, "gradients");
                      }));
      raw = std::min(raw, seconds(comm, [&] {
                       for (std::size_t at = 0; at < count; at += kBucketFloats) {
                         MPI_Allreduce(MPI_IN_PLACE, b.data() + at,
                                       static_cast<int>(std::min(kBucketFloats, count - at)),
                                       MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
                       }
                     }));
    }
    if (comm.is_root()) {
      fmt::print("{:>10.2f} {:>8} {:>14.3f} {:>14.3f} {:>8.2f}\n", mib,
                 (count + kBucketFloats - 1) / kBucketFloats, 1e3 * ours, 1e3 * raw, raw / ours);
    }
  }
  return 0;
}
