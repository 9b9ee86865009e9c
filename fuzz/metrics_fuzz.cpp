// Fuzz harness: nmt-bleu's scoring of one segment (eval/metrics: the sacreBLEU tokenizers 13a,
// none, intl, char, zh and Tercom's, the Python str layer under them, sentence BLEU, chrF and TER).
// The input is FLAGS HYPOTHESIS <RS> REFERENCE [<RS> REFERENCE...]; FLAGS' bits choose lowercasing
// and the TER and chrF options. nmt-bleu refuses input that is not UTF-8 before scoring (so here
// only the tokenizers see such input, and may refuse it with std::invalid_argument). Checked:
// scores are finite and within their ranges.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "eval/metrics/bleu.h"
#include "eval/metrics/chrf.h"
#include "eval/metrics/python_str.h"
#include "eval/metrics/ter.h"
#include "eval/metrics/tokenizer_13a.h"
#include "eval/metrics/tokenizer_ter.h"
#include "fuzz/fuzz_input.h"

namespace {

namespace eval = nmt::eval;

// Within [low, high] up to rounding: exp(log(100)) may come out a few ulps above 100, as it does in
// sacreBLEU.
void check_range(double value, double low, double high, const char* what) {
  const double slack = 1e-9 * std::max(1.0, std::abs(high));
  if (!std::isfinite(value) || value < low - slack || value > high + slack) {
    nmt::fuzz::finding(std::string(what) + " is " + std::to_string(value));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::uint8_t flags = data[0];
  std::string_view rest = nmt::fuzz::as_text(data + 1, size - 1);
  std::vector<std::string> segments;
  while (segments.size() < 4) {
    const std::size_t end = rest.find(nmt::fuzz::kPartSeparator);
    segments.emplace_back(rest.substr(0, end));
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  eval::TerOptions ter;
  ter.normalized = flags & 1;
  ter.no_punct = flags & 2;
  ter.asian_support = flags & 4;
  ter.case_sensitive = flags & 8;
  for (const auto& segment : segments) {
    for (const char* name : eval::kBleuTokenizers) {
      try {
        (void)eval::tokenize(segment, name);
      } catch (const std::invalid_argument&) {
      }
    }
    try {
      (void)eval::tokenize_ter(segment, ter);
    } catch (const std::invalid_argument&) {
    }
  }
  for (const auto& segment : segments) {
    if (eval::find_invalid_utf8(segment)) return 0;
  }
  const std::string& hypothesis = segments[0];
  std::vector<std::string_view> references(segments.begin() + 1, segments.end());
  if (references.empty()) references.emplace_back();

  eval::BleuOptions bleu;
  bleu.lowercase = flags & 16;
  bleu.tokenize = eval::kBleuTokenizers[(flags >> 5) % std::size(eval::kBleuTokenizers)];
  const eval::BleuScore score = eval::sentence_bleu(hypothesis, references, bleu);
  check_range(score.score, 0, 100, "sentence BLEU");

  eval::ChrfOptions chrf;
  chrf.word_order = (flags & 16) ? 2 : 0;
  chrf.lowercase = flags & 32;
  chrf.whitespace = flags & 64;
  chrf.eps_smoothing = flags & 128;
  const double chrf_score =
      eval::chrf_from_stats(eval::chrf_segment_stats(hypothesis, references, chrf), chrf);
  check_range(chrf_score, 0, 100, "chrF");

  const eval::TerScore ter_score =
      eval::ter_from_stats(eval::ter_segment_stats(hypothesis, references, ter));
  check_range(ter_score.score, 0, 1e9, "TER");
  return 0;
}
