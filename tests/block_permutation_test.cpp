// The keyed permutation that orders an epoch's blocks of pairs.

#include <cstdint>
#include <set>

#include "test_utils.h"
#include "trainer/data/block_permutation.h"

namespace nmt {
namespace {

// The block order is a permutation of 0..n-1 for every n (cycle walking over the Feistel domain),
// a function of the key, and far from the identity.
TEST(BlockPermutation, IsABijectionForEverySizeAndKeyed) {
  for (const std::uint64_t n : {1u, 2u, 3u, 5u, 64u, 1000u, 4097u}) {
    const data::BlockPermutation order(n, 42);
    std::set<std::uint64_t> seen;
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto x = order(i);
      EXPECT_LT(x, n);
      seen.insert(x);
    }
    EXPECT_EQ(seen.size(), n) << n;
  }
  const data::BlockPermutation a(1000, 1), b(1000, 2);
  int same = 0, fixed = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    same += a(i) == b(i);
    fixed += a(i) == i;
  }
  EXPECT_LT(same, 20);
  EXPECT_LT(fixed, 20);
}

}  // namespace
}  // namespace nmt
