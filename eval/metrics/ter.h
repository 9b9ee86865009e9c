#pragma once
// Translation Edit Rate (Snover et al. 2006) exactly as sacreBLEU 2.x computes it (metrics/ter.py
// over lib_ter.py, see ter_shift.h, and the Tercom normalizer, see tokenizer_ter.h): per segment
// the fewest edits (shifts included) against any reference and the average reference length,
// both summed over the corpus; TER = 100 * edits / length (100 when every reference is empty but
// the hypothesis is not, 0 when both are empty). Lower is better. Defaults are Tercom's:
// case-insensitive, no normalization, punctuation kept, no Asian support.

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "eval/metrics/signature.h"
#include "eval/metrics/tokenizer_ter.h"

namespace nmt::eval {

// [fewest edits over the references, average reference length]; sums over a corpus.
using TerStats = std::array<double, 2>;

struct TerScore {
  double score = 0.0;       // 0..100+ (edits can outnumber reference words)
  double num_edits = 0.0;   // summed edits
  double ref_length = 0.0;  // summed average reference lengths
};

struct TerResult {
  TerScore score;
  TerStats stats{};       // summed over the corpus
  std::string signature;  // nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:...
};

// Statistics of one raw hypothesis against its raw references (right-stripped and normalized
// here); an empty `references` is an error.
TerStats ter_segment_stats(std::string_view hypothesis,
                           const std::vector<std::string_view>& references,
                           const TerOptions& options);

TerScore ter_from_stats(const TerStats& stats);

// Corpus TER; std::invalid_argument on mismatched stream lengths.
TerResult corpus_ter(const std::vector<std::string>& hypotheses,
                     const std::vector<std::vector<std::string>>& reference_streams,
                     const TerOptions& options);

Signature ter_signature_fields(const TerOptions& options, const std::string& nrefs);
std::string ter_signature(const TerOptions& options, const std::string& nrefs);

}  // namespace nmt::eval
