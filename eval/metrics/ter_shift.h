#pragma once
// The edit counting under TER (Snover et al. 2006) as sacreBLEU 2.x implements it
// (metrics/lib_ter.py, a re-implementation of Tercom): greedy block shifts, each chosen as the one
// that lowers the word-level Levenshtein distance the most (ties: the longer block, then the
// earlier block, then the earlier target), repeated while a shift helps; then the distance of the
// shifted hypothesis. Tercom's limits are kept: blocks of at most 10 words, moved at most 50
// positions, at most 1000 shift candidates evaluated per segment (the shift found in the round
// that reaches 1000 is not applied), and the distance computed in a beam of 25 cells around the
// length-scaled diagonal. sacreBLEU's row cache is an optimisation only (a row depends on the
// hypothesis prefix alone), so it is kept here, as a trie over word ids, for speed.

#include <cstdint>
#include <vector>

namespace nmt::eval {

struct TerEdits {
  std::int64_t edits = 0;       // shifts + insertions + deletions + substitutions
  std::int64_t ref_length = 0;  // reference words
};

// Words are ids (equal words, equal ids). An empty reference costs one edit per hypothesis word.
TerEdits translation_edit_rate(const std::vector<int>& hypothesis,
                               const std::vector<int>& reference);

}  // namespace nmt::eval
