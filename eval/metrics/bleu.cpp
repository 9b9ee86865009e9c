// Corpus BLEU as sacreBLEU 2.x computes it (metrics/bleu.py: compute_bleu, _get_closest_ref_len,
// _extract_reference_info, _compute_segment_statistics; metrics/base.py: _cache_references).

#include "eval/metrics/bleu.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <stdexcept>
#include <unordered_map>

#include "eval/metrics/python_str.h"
#include "eval/metrics/tokenizer_13a.h"

namespace nmt::eval {
namespace {

// n-gram counts per order (index 0 = unigrams). Keys are the tokens joined by single spaces,
// which is unambiguous because tokens never contain whitespace.
using NgramCounts = std::array<std::unordered_map<std::string, std::int64_t>, kBleuMaxOrder>;

struct SegmentNgrams {
  NgramCounts counts;
  std::int64_t length = 0;  // tokens
};

SegmentNgrams extract_ngrams(const std::string& tokenized) {
  const auto tokens = split_python_whitespace(tokenized);
  SegmentNgrams out;
  out.length = static_cast<std::int64_t>(tokens.size());
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    std::string key;
    for (std::size_t n = 0; n < kBleuMaxOrder && i + n < tokens.size(); ++n) {
      if (n > 0) key.push_back(' ');
      key.append(tokens[i + n]);
      ++out.counts[n][key];
    }
  }
  return out;
}

// sacreBLEU walks the references in order and keeps the first strictly closer length, or a
// shorter one at equal distance.
std::int64_t closest_ref_len(std::int64_t hyp_len, const std::vector<std::int64_t>& ref_lens) {
  std::int64_t closest_diff = -1, closest_len = -1;
  for (const std::int64_t ref_len : ref_lens) {
    const std::int64_t diff = std::abs(hyp_len - ref_len);
    if (closest_diff == -1 || diff < closest_diff) {
      closest_diff = diff;
      closest_len = ref_len;
    } else if (diff == closest_diff && ref_len < closest_len) {
      closest_len = ref_len;
    }
  }
  return closest_len;
}

// sacreBLEU's my_log: Python's log(0) would raise, so a zero precision gets a huge negative log
// and exp() of the mean becomes 0.
double floored_log(double x) {
  return x == 0.0 ? -9999999999.0 : std::log(x);
}

double default_smooth_value(const std::string& method) {
  if (method == "floor") return 0.1;
  if (method == "add-k") return 1.0;
  return 0.0;
}

}  // namespace

void BleuOptions::validate() const {
  if (std::find(std::begin(kBleuTokenizers), std::end(kBleuTokenizers), tokenize) ==
      std::end(kBleuTokenizers)) {
    throw std::invalid_argument("BLEU tokenizer '" + tokenize +
                                "' is not supported: use 13a, none, intl, char or zh (nmt-bleu has "
                                "no MeCab or SentencePiece tokenizers)");
  }
  if (smooth != "exp" && smooth != "none" && smooth != "floor" && smooth != "add-k") {
    throw std::invalid_argument("BLEU smoothing '" + smooth +
                                "' is unknown: use exp, none, floor or add-k");
  }
  if (smooth_value && !std::isfinite(*smooth_value)) {
    throw std::invalid_argument("BLEU smoothing value must be a finite number");
  }
}

BleuStats& BleuStats::operator+=(const BleuStats& other) {
  hyp_len += other.hyp_len;
  ref_len += other.ref_len;
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    correct[n] += other.correct[n];
    total[n] += other.total[n];
  }
  return *this;
}

std::string BleuScore::verbose() const {
  return fmt::format(
      "{:.1f}/{:.1f}/{:.1f}/{:.1f} (BP = {:.3f} ratio = {:.3f} hyp_len = {} ref_len = {})",
      precisions[0], precisions[1], precisions[2], precisions[3], bp, ratio, hyp_len, ref_len);
}

std::string bleu_preprocess(std::string_view segment, const BleuOptions& options) {
  if (!options.lowercase) return tokenize(rstrip_python_whitespace(segment), options.tokenize);
  const std::string lowered = python_lower(segment);
  return tokenize(rstrip_python_whitespace(lowered), options.tokenize);
}

BleuStats bleu_segment_stats(std::string_view hypothesis,
                             const std::vector<std::string_view>& references,
                             const BleuOptions& options) {
  // Reference side: per n-gram the maximum count over references, and every length.
  NgramCounts ref_counts;
  std::vector<std::int64_t> ref_lens;
  for (const auto reference : references) {
    const SegmentNgrams ref = extract_ngrams(bleu_preprocess(reference, options));
    ref_lens.push_back(ref.length);
    for (int n = 0; n < kBleuMaxOrder; ++n) {
      for (const auto& [ngram, count] : ref.counts[n]) {
        auto& slot = ref_counts[n][ngram];
        slot = std::max(slot, count);
      }
    }
  }
  const SegmentNgrams hyp = extract_ngrams(bleu_preprocess(hypothesis, options));
  BleuStats stats;
  stats.hyp_len = hyp.length;
  stats.ref_len = closest_ref_len(hyp.length, ref_lens);
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    for (const auto& [ngram, count] : hyp.counts[n]) {
      stats.total[n] += count;
      const auto it = ref_counts[n].find(ngram);
      if (it != ref_counts[n].end()) stats.correct[n] += std::min(count, it->second);
    }
  }
  return stats;
}

BleuScore bleu_from_stats(const BleuStats& stats, const BleuOptions& options) {
  BleuScore out;
  out.hyp_len = stats.hyp_len;
  out.ref_len = stats.ref_len;
  out.ratio =
      stats.ref_len ? static_cast<double>(stats.hyp_len) / static_cast<double>(stats.ref_len) : 0.0;
  if (stats.hyp_len < stats.ref_len) {
    out.bp = stats.hyp_len > 0 ? std::exp(1.0 - static_cast<double>(stats.ref_len) /
                                                    static_cast<double>(stats.hyp_len))
                               : 0.0;
  } else {
    out.bp = 1.0;
  }
  // No match at any order: 0 straight away (sacreBLEU issue #141), whatever the smoothing.
  if (std::all_of(stats.correct.begin(), stats.correct.end(), [](auto c) { return c == 0; })) {
    return out;
  }
  const double value = options.smooth_value.value_or(default_smooth_value(options.smooth));
  double smooth_mteval = 1.0;
  int eff_order = kBleuMaxOrder;
  for (int n = 0; n < kBleuMaxOrder; ++n) {
    double correct = static_cast<double>(stats.correct[n]);
    double total = static_cast<double>(stats.total[n]);
    if (options.smooth == "add-k" && n > 0) {
      correct += value;
      total += value;
    }
    // No n-grams of this order at all: the remaining precisions stay 0, so the score is 0.
    if (total == 0.0) break;
    if (options.effective_order) eff_order = n + 1;
    if (correct == 0.0) {
      if (options.smooth == "exp") {
        smooth_mteval *= 2.0;  // NIST geometric smoothing: 1/2, 1/4, ... of a match
        out.precisions[n] = 100.0 / (smooth_mteval * total);
      } else if (options.smooth == "floor") {
        out.precisions[n] = 100.0 * value / total;
      }
    } else {
      out.precisions[n] = 100.0 * correct / total;
    }
  }
  double log_sum = 0.0;
  for (int n = 0; n < eff_order; ++n) log_sum += floored_log(out.precisions[n]);
  out.score = out.bp * std::exp(log_sum / eff_order);
  return out;
}

BleuScore sentence_bleu(std::string_view hypothesis,
                        const std::vector<std::string_view>& references,
                        const BleuOptions& options) {
  BleuOptions sentence = options;
  sentence.effective_order = true;
  sentence.validate();
  return bleu_from_stats(bleu_segment_stats(hypothesis, references, sentence), sentence);
}

BleuResult corpus_bleu(const std::vector<std::string>& hypotheses,
                       const std::vector<std::vector<std::string>>& reference_streams,
                       const BleuOptions& options) {
  options.validate();
  const SegmentReferences refs = gather_references(reference_streams, hypotheses.size());
  BleuResult result{};
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    const std::string& hyp = hypotheses[i];
    // sacreBLEU's hint that the input may still be tokenized; counted on the raw line.
    if (!options.force && hyp.size() >= 2 && hyp.compare(hyp.size() - 2, 2, " .") == 0) {
      ++result.tokenized_period_lines;
    }
    result.stats += bleu_segment_stats(hyp, refs.segments[i], options);
  }
  result.score = bleu_from_stats(result.stats, options);
  result.signature = bleu_signature(options, refs.nrefs);
  return result;
}

Signature bleu_signature_fields(const BleuOptions& options, const std::string& nrefs) {
  std::string smooth = options.smooth;
  if (options.smooth == "floor" || options.smooth == "add-k") {
    smooth += fmt::format("[{:.2f}]", options.smooth_value.value_or(default_smooth_value(smooth)));
  }
  Signature sig;
  sig.nrefs = nrefs;
  sig.fields = {{"case", "c", options.lowercase ? "lc" : "mixed"},
                {"eff", "e", options.effective_order ? "yes" : "no"},
                {"tok", "tok", options.tokenize},
                {"smooth", "s", smooth}};
  return sig;
}

std::string bleu_signature(const BleuOptions& options, const std::string& nrefs) {
  return bleu_signature_fields(options, nrefs).format();
}

SegmentReferences gather_references(const std::vector<std::vector<std::string>>& reference_streams,
                                    std::size_t num_hypotheses) {
  if (reference_streams.empty()) throw std::invalid_argument("no reference stream given");
  if (num_hypotheses == 0) throw std::invalid_argument("the hypothesis stream has no lines");
  for (std::size_t r = 0; r < reference_streams.size(); ++r) {
    if (reference_streams[r].size() != num_hypotheses) {
      throw std::invalid_argument(
          fmt::format("reference stream {} has {} lines but the hypothesis stream has {}", r + 1,
                      reference_streams[r].size(), num_hypotheses));
    }
  }
  SegmentReferences out;
  out.segments.resize(num_hypotheses);
  for (std::size_t i = 0; i < num_hypotheses; ++i) {
    for (const auto& stream : reference_streams) out.segments[i].push_back(stream[i]);
  }
  out.nrefs = std::to_string(reference_streams.size());
  return out;
}

std::vector<std::string> split_lines(std::string_view data, const std::string& source,
                                     bool universal_newlines) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < data.size()) {
    std::size_t end =
        universal_newlines ? data.find_first_of("\r\n", start) : data.find('\n', start);
    if (end == std::string_view::npos) end = data.size();
    const std::string_view line = data.substr(start, end - start);
    if (const auto bad = find_invalid_utf8(line)) {
      throw std::invalid_argument(source + ": invalid UTF-8 on line " +
                                  std::to_string(lines.size() + 1) + " (byte " +
                                  std::to_string(*bad + 1) + " of the line)");
    }
    lines.emplace_back(rstrip_python_whitespace(line));
    start = end + 1;
    if (universal_newlines && end + 1 < data.size() && data[end] == '\r' && data[end + 1] == '\n') {
      ++start;  // \r\n is one line end
    }
  }
  return lines;
}

std::string format_score_line(const std::string& name, double score, int width,
                              const std::string& signature, const std::string& verbose) {
  std::string line = signature.empty() ? name : name + "|" + signature;
  line += fmt::format(" = {:.{}f}", score, width);
  if (!verbose.empty()) line += " " + verbose;
  return line;
}

}  // namespace nmt::eval
