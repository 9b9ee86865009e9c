#pragma once
// main() of the GoogleTest binaries that CTest runs under mpirun: MPI up, rank 0 prints, and all
// ranks agree on one outcome so no rank exits while another still waits in a collective.

#include <gtest/gtest.h>

#include "trainer/distributed/mpi_context.h"

namespace nmt::testing {

inline int run_mpi_tests(int argc, char** argv, distributed::Communicator*& world) {
  distributed::MpiContext mpi(&argc, &argv);
  world = &mpi.world();
  ::testing::InitGoogleTest(&argc, argv);
  // Every rank's failures still set its exit code; mpirun fails the job when any rank fails.
  if (!mpi.world().is_root()) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int result = RUN_ALL_TESTS();
  std::vector<std::int64_t> failed = {result != 0 ? 1 : 0};
  mpi.world().allreduce_sum(failed);
  return failed[0] == 0 ? 0 : 1;
}

}  // namespace nmt::testing
