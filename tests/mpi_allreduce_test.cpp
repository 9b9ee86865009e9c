// Real MPI ranks (CTest launches this under mpirun -np 2 --oversubscribe): the collectives that
// data-parallel training needs produce the right values on every rank.

#include <gtest/gtest.h>

#include <numeric>

#include "trainer/dist/mpi_context.h"

namespace nmt::dist {
namespace {

MpiContext* g_mpi = nullptr;

TEST(Mpi, RunsOnSeveralRanks) {
  EXPECT_GE(g_mpi->size(), 2) << "launch with mpirun -np 2 or more";
  EXPECT_GE(g_mpi->rank(), 0);
  EXPECT_LT(g_mpi->rank(), g_mpi->size());
}

TEST(Mpi, AllreduceSumsOverRanks) {
  const int n = g_mpi->size();
  const int r = g_mpi->rank();
  // Rank r contributes r + 1 in every slot, scaled per slot: the sum is n(n+1)/2 * (i + 1).
  std::vector<double> values(1000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = (r + 1) * static_cast<double>(i + 1);
  g_mpi->allreduce_sum(values);
  const double ranks_sum = n * (n + 1) / 2.0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    ASSERT_DOUBLE_EQ(values[i], ranks_sum * static_cast<double>(i + 1)) << "slot " << i;
  }

  std::vector<std::int64_t> tokens = {r == 0 ? 25000 : 12, std::int64_t{1} << 40};
  g_mpi->allreduce_sum(tokens);
  EXPECT_EQ(tokens[0], 25000 + 12 * (n - 1));
  EXPECT_EQ(tokens[1], n * (std::int64_t{1} << 40));

  std::vector<float> grads(3, 0.5f * static_cast<float>(r));
  g_mpi->allreduce_sum(grads);
  EXPECT_FLOAT_EQ(grads[2], 0.5f * static_cast<float>(n * (n - 1) / 2));
}

TEST(Mpi, BroadcastCopiesRootState) {
  std::vector<float> params(4, static_cast<float>(g_mpi->rank() + 10));
  g_mpi->broadcast(params, 0);
  for (float p : params) EXPECT_FLOAT_EQ(p, 10.0f);
  std::string config = g_mpi->is_root() ? "model:\n  d_model: 512\n" : "";
  g_mpi->broadcast(config, 0);
  EXPECT_EQ(config, "model:\n  d_model: 512\n");
  g_mpi->barrier();
}

}  // namespace
}  // namespace nmt::dist

int main(int argc, char** argv) {
  nmt::dist::MpiContext mpi(&argc, &argv);
  nmt::dist::g_mpi = &mpi;
  ::testing::InitGoogleTest(&argc, argv);
  // Only rank 0 prints results; every rank's failures still set its exit code, and mpirun fails
  // the job when any rank exits non-zero.
  if (!mpi.is_root()) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int result = RUN_ALL_TESTS();
  // Agree on one outcome so no rank exits early while another still waits in a collective.
  std::vector<std::int64_t> failed = {result != 0 ? 1 : 0};
  mpi.allreduce_sum(failed);
  return failed[0] == 0 ? 0 : 1;
}
