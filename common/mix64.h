#pragma once
// SplitMix64's output function (a 64-bit finalizing mix): inputs that differ in a few bits, such as
// consecutive counters or neighbouring (seed, key) pairs, give statistically unrelated outputs.
// Used wherever a seed is derived from a run's seed and a position.

#include <cstdint>

namespace nmt {

// SplitMix64's increment, 2^64 divided by the golden ratio (odd): multiples of it spread
// consecutive counters and keys over the whole 64-bit range before the mix.
inline constexpr std::uint64_t kSplitMix64Gamma = 0x9E3779B97F4A7C15ULL;

inline std::uint64_t splitmix64_finalize(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

}  // namespace nmt
