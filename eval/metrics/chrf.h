#pragma once
// chrF (Popović 2015) and chrF++ (Popović 2017) exactly as sacreBLEU 2.x computes them
// (metrics/chrf.py, metrics/helpers.py): character n-grams up to 6 over the segment with all
// (Python) whitespace removed, word n-grams after sacreBLEU's punctuation splitting, beta 2,
// per-segment statistics against the best reference by f-score, summed over the corpus, and
// sacreBLEU's default "effective order" averaging (eff:yes) rather than eps smoothing.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "eval/metrics/signature.h"

namespace nmt::eval {

struct ChrfOptions {
  int char_order = 6;          // --chrf-char-order: character n-gram order (nc)
  int word_order = 0;          // --chrf-word-order: word n-gram order (nw); 2 is chrF++
  int beta = 2;                // --chrf-beta: recall weighs beta times precision
  bool lowercase = false;      // --chrf-lowercase (sacreBLEU's -lc applies to BLEU only)
  bool whitespace = false;     // --chrf-whitespace: keep whitespace in character n-grams
  bool eps_smoothing = false;  // --chrf-eps-smoothing: chrF++.py-style averaging of f-scores

  // Throws std::invalid_argument for orders or beta out of range.
  void validate() const;
};

// Per order, character orders first then word orders: [hypothesis n-grams, reference n-grams,
// matched n-grams]; 3 * (char_order + word_order) numbers.
using ChrfStats = std::vector<std::int64_t>;

struct ChrfResult {
  double score = 0.0;     // 0..100
  std::string name;       // chrF2, chrF2++...
  std::string signature;  // nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:nmt-bleu-2.4.0
  ChrfStats stats;        // summed over the corpus
};

// sacreBLEU's chrF+ tokenization: split on whitespace, then one ASCII punctuation character
// split off the end of a word, or else off its start ("(hi)" -> "(hi", ")").
std::vector<std::u32string> chrf_words(std::u32string_view segment);

// Statistics of one hypothesis against the reference with the best f-score (the first one on
// ties); inputs raw (lowercased here when asked).
ChrfStats chrf_segment_stats(std::string_view hypothesis,
                             const std::vector<std::string_view>& references,
                             const ChrfOptions& options);

// The score of (summed) statistics.
double chrf_from_stats(const ChrfStats& stats, const ChrfOptions& options);

// Corpus chrF; throws std::invalid_argument on mismatched lengths or no hypotheses.
ChrfResult corpus_chrf(const std::vector<std::string>& hypotheses,
                       const std::vector<std::vector<std::string>>& reference_streams,
                       const ChrfOptions& options);

std::string chrf_name(const ChrfOptions& options);  // "chrF" + beta + one '+' per word order
Signature chrf_signature_fields(const ChrfOptions& options, const std::string& nrefs);
std::string chrf_signature(const ChrfOptions& options, const std::string& nrefs);

}  // namespace nmt::eval
