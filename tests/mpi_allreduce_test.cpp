// Real MPI ranks (CTest launches this under mpirun -np 2 --oversubscribe): the collectives that
// data-parallel training needs produce the right values on every rank.

#include <gtest/gtest.h>

#include <numeric>

#include "mpi_test_main.h"
#include "trainer/distributed/mpi_context.h"

namespace nmt::distributed {
namespace {

Communicator* g_mpi = nullptr;

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

// Odd-sized buffers of each type, large enough to run in pieces (above 4 MiB, 1 MiB each), started
// together, with a barrier started while later pieces still wait their turn: every element is
// summed exactly once, and the barrier does not overtake the pieces queued before it.
TEST(Mpi, LargeOverlappingAllreducesSumEveryElement) {
  const int n = g_mpi->size();
  const int r = g_mpi->rank();
  const double ranks_sum = n * (n + 1) / 2.0;
  auto pattern = [](std::size_t i) { return static_cast<double>(i % 1000 + 1); };
  std::vector<float> big(3 * (std::size_t{1} << 20) + 12345);  // 12 MiB and a bit: 13 pieces
  std::vector<double> wide((std::size_t{1} << 20) + 7);        // 8 MiB and a bit: 9 pieces
  std::vector<std::int64_t> small = {r + 1, 40};
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>((r + 1) * pattern(i));
  for (std::size_t i = 0; i < wide.size(); ++i) wide[i] = -(r + 1) * pattern(i);

  std::vector<Communicator::Request> requests;
  requests.push_back(g_mpi->start_allreduce_sum(big.data(), big.size(), ElementType::kFloat32));
  requests.push_back(g_mpi->start_allreduce_sum(wide.data(), wide.size(), ElementType::kFloat64));
  requests.push_back(g_mpi->start_allreduce_sum(small.data(), small.size(), ElementType::kInt64));
  EXPECT_TRUE(requests[0].pending());
  g_mpi->test(requests[2]);  // progress, in whatever state the pieces are
  g_mpi->barrier();
  g_mpi->wait_all(requests, "overlapping");
  for (const auto& request : requests) EXPECT_FALSE(request.pending());

  for (std::size_t i = 0; i < big.size(); ++i) {
    ASSERT_FLOAT_EQ(big[i], static_cast<float>(ranks_sum * pattern(i))) << "float32 slot " << i;
  }
  for (std::size_t i = 0; i < wide.size(); ++i) {
    ASSERT_DOUBLE_EQ(wide[i], -ranks_sum * pattern(i)) << "float64 slot " << i;
  }
  EXPECT_EQ(small[0], static_cast<std::int64_t>(ranks_sum));
  EXPECT_EQ(small[1], 40 * n);
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
}  // namespace nmt::distributed

int main(int argc, char** argv) {
  return nmt::testing::run_mpi_tests(argc, argv, nmt::distributed::g_mpi);
}
