// chrF and chrF++ as sacreBLEU 2.x computes them (metrics/chrf.py: _remove_punctuation,
// _get_match_statistics, _compute_f_score, _compute_segment_statistics; metrics/helpers.py:
// extract_all_char_ngrams, extract_word_ngrams). Everything runs on code points, as Python
// strings do, so a character n-gram never splits a UTF-8 sequence.

#include "eval/metrics/chrf.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <unordered_map>

#include "eval/metrics/bleu.h"
#include "eval/metrics/python_str.h"

namespace nmt::eval {
namespace {

// Keys view into the SegmentNgrams that owns the text: no string per n-gram.
using Counter = std::unordered_map<std::u32string_view, std::int64_t>;

// Python's string.punctuation: the ASCII punctuation sacreBLEU splits off words for chrF+.
bool is_ascii_punctuation(char32_t c) {
  return (c >= 0x21 && c <= 0x2F) || (c >= 0x3A && c <= 0x40) || (c >= 0x5B && c <= 0x60) ||
         (c >= 0x7B && c <= 0x7E);
}

// All n-gram counters of one segment: character orders 1..nc, then word orders 1..nw. The
// counters view into the texts held here, so an instance is never copied or moved.
class SegmentNgrams {
 public:
  SegmentNgrams(std::string_view segment, const ChrfOptions& options) {
    std::u32string text = decode_utf8(segment);
    if (options.lowercase) text = python_lower(text);
    if (options.whitespace) {
      chars_ = text;
    } else {
      for (const auto word : split_python_whitespace(std::u32string_view(text))) chars_ += word;
    }
    for (int n = 1; n <= options.char_order; ++n) add_char_ngrams(static_cast<std::size_t>(n));
    if (options.word_order > 0) {
      // Word n-grams are sacreBLEU's space-joined words, i.e. substrings of the joined text.
      std::vector<std::size_t> starts;
      for (const auto& word : chrf_words(text)) {
        if (!words_.empty()) words_ += U' ';
        starts.push_back(words_.size());
        words_ += word;
      }
      starts.push_back(words_.size() + 1);  // where a next word would start
      for (int n = 1; n <= options.word_order; ++n) {
        add_word_ngrams(starts, static_cast<std::size_t>(n));
      }
    }
  }
  SegmentNgrams(const SegmentNgrams&) = delete;
  SegmentNgrams& operator=(const SegmentNgrams&) = delete;

  const std::vector<Counter>& counters() const { return counters_; }

 private:
  void add_char_ngrams(std::size_t n) {
    Counter& counts = counters_.emplace_back();
    const std::u32string_view text(chars_);
    counts.reserve(text.size());
    for (std::size_t i = 0; i + n <= text.size(); ++i) ++counts[text.substr(i, n)];
  }

  void add_word_ngrams(const std::vector<std::size_t>& starts, std::size_t n) {
    Counter& counts = counters_.emplace_back();
    const std::u32string_view text(words_);
    const std::size_t num_words = starts.size() - 1;
    for (std::size_t i = 0; i + n <= num_words; ++i) {
      ++counts[text.substr(starts[i], starts[i + n] - 1 - starts[i])];
    }
  }

  std::u32string chars_;  // the segment without whitespace (with it under --chrf-whitespace)
  std::u32string words_;  // chrF+ words joined by single spaces
  std::vector<Counter> counters_;
};

// [hypothesis, reference, matched] counts of one order. Hypothesis n-grams only count when the
// reference has n-grams of that order, so a too-short reference leaves the order out.
void append_match_stats(const Counter& hyp, const Counter& ref, ChrfStats& stats) {
  std::int64_t hyp_count = 0, ref_count = 0, matched = 0;
  for (const auto& [ngram, count] : hyp) {
    hyp_count += count;
    const auto it = ref.find(ngram);
    if (it != ref.end()) matched += std::min(count, it->second);
  }
  for (const auto& entry : ref) ref_count += entry.second;
  stats.push_back(ref.empty() ? 0 : hyp_count);
  stats.push_back(ref_count);
  stats.push_back(matched);
}

}  // namespace

void ChrfOptions::validate() const {
  if (char_order < 0 || word_order < 0 || char_order + word_order == 0) {
    throw std::invalid_argument(fmt::format(
        "chrF needs non-negative n-gram orders, not both 0 (char order {}, word order {})",
        char_order, word_order));
  }
  if (beta < 0) throw std::invalid_argument(fmt::format("chrF beta must be >= 0, not {}", beta));
}

std::vector<std::u32string> chrf_words(std::u32string_view segment) {
  std::vector<std::u32string> words;
  for (const auto word : split_python_whitespace(segment)) {
    if (word.size() == 1) {
      words.emplace_back(word);
    } else if (is_ascii_punctuation(word.back())) {
      words.emplace_back(word.substr(0, word.size() - 1));
      words.emplace_back(word.substr(word.size() - 1));
    } else if (is_ascii_punctuation(word.front())) {
      words.emplace_back(word.substr(0, 1));
      words.emplace_back(word.substr(1));
    } else {
      words.emplace_back(word);
    }
  }
  return words;
}

double chrf_from_stats(const ChrfStats& stats, const ChrfOptions& options) {
  const int order = options.char_order + options.word_order;
  const double eps = 1e-16;  // chrF++.py's smoothing constant
  const double factor = static_cast<double>(options.beta) * options.beta;
  double eps_score = 0.0, avg_prec = 0.0, avg_rec = 0.0;
  int effective_order = 0;
  for (int i = 0; i < order; ++i) {
    const auto n_hyp = stats.at(3 * i), n_ref = stats.at(3 * i + 1), n_match = stats.at(3 * i + 2);
    const double prec = n_hyp > 0 ? static_cast<double>(n_match) / static_cast<double>(n_hyp) : eps;
    const double rec = n_ref > 0 ? static_cast<double>(n_match) / static_cast<double>(n_ref) : eps;
    const double denom = factor * prec + rec;
    eps_score += denom > 0 ? (1 + factor) * prec * rec / denom : eps;
    // sacreBLEU's default: average precision and recall over the orders both sides have.
    if (n_hyp > 0 && n_ref > 0) {
      avg_prec += prec;
      avg_rec += rec;
      ++effective_order;
    }
  }
  if (options.eps_smoothing) return 100 * eps_score / order;
  if (effective_order == 0) return 0.0;
  avg_prec /= effective_order;
  avg_rec /= effective_order;
  if (avg_prec + avg_rec == 0.0) return 0.0;
  double score = (1 + factor) * avg_prec * avg_rec;
  score /= factor * avg_prec + avg_rec;
  return 100 * score;
}

ChrfStats chrf_segment_stats(std::string_view hypothesis,
                             const std::vector<std::string_view>& references,
                             const ChrfOptions& options) {
  const SegmentNgrams hyp(hypothesis, options);
  ChrfStats best;
  double best_f = -1.0;
  for (const auto reference : references) {
    const SegmentNgrams ref(reference, options);
    ChrfStats stats;
    for (std::size_t k = 0; k < hyp.counters().size(); ++k) {
      append_match_stats(hyp.counters()[k], ref.counters()[k], stats);
    }
    const double f = chrf_from_stats(stats, options);
    if (f > best_f) {  // strict: the first of equally good references wins
      best_f = f;
      best = std::move(stats);
    }
  }
  return best;
}

ChrfResult corpus_chrf(const std::vector<std::string>& hypotheses,
                       const std::vector<std::vector<std::string>>& reference_streams,
                       const ChrfOptions& options) {
  options.validate();
  const SegmentReferences refs = gather_references(reference_streams, hypotheses.size());
  ChrfResult result;
  result.stats.assign(3 * static_cast<std::size_t>(options.char_order + options.word_order), 0);
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    const ChrfStats stats = chrf_segment_stats(hypotheses[i], refs.segments[i], options);
    for (std::size_t k = 0; k < stats.size(); ++k) result.stats[k] += stats[k];
  }
  result.score = chrf_from_stats(result.stats, options);
  result.name = chrf_name(options);
  result.signature = chrf_signature(options, refs.nrefs);
  return result;
}

std::string chrf_name(const ChrfOptions& options) {
  return fmt::format("chrF{}{}", options.beta,
                     std::string(static_cast<std::size_t>(options.word_order), '+'));
}

Signature chrf_signature_fields(const ChrfOptions& options, const std::string& nrefs) {
  Signature sig;
  sig.nrefs = nrefs;
  sig.fields = {{"case", "c", options.lowercase ? "lc" : "mixed"},
                {"eff", "e", options.eps_smoothing ? "no" : "yes"},
                {"nc", "nc", std::to_string(options.char_order)},
                {"nw", "nw", std::to_string(options.word_order)},
                {"space", "s", options.whitespace ? "yes" : "no"}};
  return sig;
}

std::string chrf_signature(const ChrfOptions& options, const std::string& nrefs) {
  return chrf_signature_fields(options, nrefs).format();
}

}  // namespace nmt::eval
