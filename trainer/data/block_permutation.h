#pragma once
// A pseudo-random permutation of 0..n-1 computed one element at a time, in constant memory: a
// balanced Feistel network over the smallest even number of bits that covers n, keyed by a 64-bit
// key, with cycle walking (values >= n are permuted again until they fall inside). Deterministic
// in (n, key) on every platform; the epoch plans use it to shuffle blocks of pairs without holding
// a shuffled copy of the split.

#include <cstdint>

#include "common/mix64.h"

namespace nmt::data {

class BlockPermutation {
 public:
  BlockPermutation(std::uint64_t n, std::uint64_t key) : n_(n), key_(key) {
    int bits = 2;
    while (bits < 62 && (std::uint64_t{1} << bits) < n) bits += 2;
    half_bits_ = bits / 2;
    mask_ = (std::uint64_t{1} << half_bits_) - 1;
  }

  std::uint64_t size() const { return n_; }

  // The element at position i (i < size()).
  std::uint64_t operator()(std::uint64_t i) const {
    do {
      i = round_trip(i);
    } while (i >= n_);  // the domain is under 4n: on average fewer than 4 passes
    return i;
  }

 private:
  static constexpr int kRounds = 6;

  std::uint64_t round_trip(std::uint64_t x) const {
    std::uint64_t left = x >> half_bits_, right = x & mask_;
    for (int r = 0; r < kRounds; ++r) {
      const std::uint64_t f =
          splitmix64_finalize(right ^ (key_ + static_cast<std::uint64_t>(r) * kSplitMix64Gamma));
      const std::uint64_t next = left ^ (f & mask_);
      left = right;
      right = next;
    }
    return (left << half_bits_) | right;
  }

  std::uint64_t n_, key_;
  int half_bits_ = 1;
  std::uint64_t mask_ = 1;
};

}  // namespace nmt::data
