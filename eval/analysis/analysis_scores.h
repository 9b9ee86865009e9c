#pragma once
// Sentence-level scores for error analysis, as sacreBLEU 2.x's sentence_score computes them:
// BLEU with effective order and 'exp' smoothing (metrics/bleu.py: BLEU(effective_order=True)),
// and chrF from one segment's statistics (already effective-order in corpus mode). Both are built
// on the corpus functions of eval/metrics/bleu.h and eval/metrics/chrf.h, so a sentence's
// statistics are the ones the corpus score sums.

#include "eval/metrics/bleu.h"
#include "eval/metrics/chrf.h"

namespace nmt::eval::analysis {

// sacreBLEU's compute_bleu(effective_order=True) on one segment's statistics: the geometric mean
// runs over the orders up to the last one the hypothesis has n-grams of (so a 3-word sentence is
// not scored 0 for lacking 4-grams); no match at all scores 0. `options.smooth` must be "exp"
// (sentence BLEU without smoothing is meaningless); std::invalid_argument otherwise.
double effective_order_bleu(const BleuStats& stats, const BleuOptions& options);

// One hypothesis against one reference (non-empty): the statistics and both scores.
struct SentenceScore {
  BleuStats bleu_stats;
  ChrfStats chrf_stats;
  double bleu = 0.0;  // 0..100, effective_order_bleu
  double chrf = 0.0;  // 0..100
};

SentenceScore score_sentence(std::string_view hypothesis, std::string_view reference,
                             const BleuOptions& bleu, const ChrfOptions& chrf);

}  // namespace nmt::eval::analysis
