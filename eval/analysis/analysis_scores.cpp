// Sentence BLEU with effective order (sacreBLEU metrics/bleu.py, compute_bleu with
// effective_order=True and smooth_method='exp'); see eval/analysis/analysis_scores.h.

#include "eval/analysis/analysis_scores.h"

#include <cmath>
#include <stdexcept>

namespace nmt::eval::analysis {

double effective_order_bleu(const BleuStats& stats, const BleuOptions& options) {
  if (options.smooth != "exp") {
    throw std::invalid_argument("sentence BLEU uses 'exp' smoothing, not '" + options.smooth + "'");
  }
  int orders = 0;  // sacreBLEU stops at the first order without hypothesis n-grams
  while (orders < kBleuMaxOrder && stats.total[orders] > 0) ++orders;
  // With every order present, effective order changes nothing: the corpus formula is exact.
  if (orders == kBleuMaxOrder) return bleu_from_stats(stats, options).score;
  bool any_match = false;
  for (const auto c : stats.correct) any_match = any_match || c > 0;
  if (!any_match) return 0.0;  // sacreBLEU's early stop (#141)

  double bp = 1.0;
  if (stats.hyp_len < stats.ref_len) {
    bp = stats.hyp_len > 0 ? std::exp(1.0 - static_cast<double>(stats.ref_len) /
                                                static_cast<double>(stats.hyp_len))
                           : 0.0;
  }
  double smooth = 1.0, log_sum = 0.0;
  for (int n = 0; n < orders; ++n) {
    const auto total = static_cast<double>(stats.total[n]);
    double precision;
    if (stats.correct[n] == 0) {
      smooth *= 2;  // 'exp': each order without a match halves the previous stand-in count
      precision = 100.0 / (smooth * total);
    } else {
      precision = 100.0 * static_cast<double>(stats.correct[n]) / total;
    }
    log_sum += std::log(precision);
  }
  return bp * std::exp(log_sum / orders);
}

SentenceScore score_sentence(std::string_view hypothesis, std::string_view reference,
                             const BleuOptions& bleu, const ChrfOptions& chrf) {
  SentenceScore out;
  const std::vector<std::string_view> references{reference};
  out.bleu_stats = bleu_segment_stats(hypothesis, references, bleu);
  out.chrf_stats = chrf_segment_stats(hypothesis, references, chrf);
  out.bleu = effective_order_bleu(out.bleu_stats, bleu);
  out.chrf = chrf_from_stats(out.chrf_stats, chrf);
  return out;
}

}  // namespace nmt::eval::analysis
