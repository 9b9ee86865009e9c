#pragma once
// The one rule for batches of token sequences, shared by training (trainer/data/batching.cpp) and
// translation (trainer/decode/translator.cpp): sequences sorted by length are cut into batches
// whose padded size, rows x the longest sequence with its BOS or EOS, stays within a token budget;
// a batch is a rectangle of ids, each row followed by EOS (or led by BOS) and padded with 0.

#include <ATen/core/Tensor.h>
#include <ATen/ops/zeros.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <vector>

#include "preprocess/vocabulary.h"

namespace nmt::data {

// A batch being filled with length-sorted sequences: whether one more fits within `budget` padded
// tokens. A batch of one always fits, however long the sequence.
class PaddedBudget {
 public:
  explicit PaddedBudget(std::int64_t budget) : budget_(budget) {}
  // `length`: the sequence's ids, without its BOS or EOS.
  bool fits(std::int64_t length) const {
    return rows_ == 0 || (rows_ + 1) * std::max(longest_, length + 1) <= budget_;
  }
  void add(std::int64_t length) {
    ++rows_;
    longest_ = std::max(longest_, length + 1);
  }
  void clear() { rows_ = longest_ = 0; }

 private:
  std::int64_t budget_;
  std::int64_t rows_ = 0;
  std::int64_t longest_ = 0;  // with BOS or EOS
};

// Cuts sequences of `lengths` (sorted ascending; ids without BOS or EOS) into consecutive batches
// within `budget` padded tokens: each batch's end, an index into `lengths`, in order.
inline std::vector<std::size_t> batch_ends(const std::vector<std::int64_t>& lengths,
                                           std::int64_t budget) {
  std::vector<std::size_t> ends;
  PaddedBudget batch(budget);
  for (std::size_t i = 0; i < lengths.size(); ++i) {
    if (!batch.fits(lengths[i])) {
      ends.push_back(i);
      batch.clear();
    }
    batch.add(lengths[i]);
  }
  if (!lengths.empty()) ends.push_back(lengths.size());
  return ends;
}

// [rows.size(), longest + 1] int64 on the CPU: row r holds rows[r]'s ids, then EOS when `eos`
// (the encoder's input, the decoder's target), or BOS then the ids when not (the decoder's
// input); 0 (pad) after. `Rows`: a sequence of ranges of integer ids (begin(), end()).
template <typename Rows>
at::Tensor padded_rows(const Rows& rows, bool eos) {
  std::int64_t longest = 0;
  for (const auto& row : rows)
    longest = std::max<std::int64_t>(longest, std::distance(row.begin(), row.end()));
  const auto count = static_cast<std::int64_t>(std::distance(rows.begin(), rows.end()));
  auto batch = at::zeros({count, longest + 1}, at::kLong);  // [rows, longest + 1], 0 = pad
  auto* out = batch.data_ptr<std::int64_t>();
  for (const auto& row : rows) {
    auto* at = out;
    if (!eos) *at++ = preprocess::kBosId;
    at = std::copy(row.begin(), row.end(), at);
    if (eos) *at = preprocess::kEosId;
    out += longest + 1;
  }
  return batch;
}

}  // namespace nmt::data
