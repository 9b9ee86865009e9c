// TER at the segment and corpus level as sacreBLEU 2.x's metrics/ter.py computes it.

#include "eval/metrics/ter.h"

#include <stdexcept>
#include <unordered_map>

#include "eval/metrics/bleu.h"
#include "eval/metrics/python_str.h"
#include "eval/metrics/ter_shift.h"

namespace nmt::eval {

TerStats ter_segment_stats(std::string_view hypothesis,
                           const std::vector<std::string_view>& references,
                           const TerOptions& options) {
  if (references.empty()) throw std::invalid_argument("TER: a segment has no reference");
  // Words become ids shared by the hypothesis and its references.
  std::unordered_map<std::string, int> ids;
  const auto to_ids = [&](std::string_view segment) {
    const std::string tokenized = tokenize_ter(rstrip_python_whitespace(segment), options);
    std::vector<int> words;
    for (const auto word : split_python_whitespace(std::string_view(tokenized))) {
      words.push_back(ids.emplace(std::string(word), static_cast<int>(ids.size())).first->second);
    }
    return words;
  };
  const std::vector<int> hyp = to_ids(hypothesis);
  double ref_lengths = 0.0;
  std::int64_t best = 10000000000000000;  // sacreBLEU's int(1e16)
  for (const auto reference : references) {
    const TerEdits edits = translation_edit_rate(hyp, to_ids(reference));
    ref_lengths += static_cast<double>(edits.ref_length);
    best = std::min(best, edits.edits);
  }
  return {static_cast<double>(best), ref_lengths / static_cast<double>(references.size())};
}

TerScore ter_from_stats(const TerStats& stats) {
  TerScore out;
  out.num_edits = stats[0];
  out.ref_length = stats[1];
  if (stats[1] > 0) {
    out.score = 100 * (stats[0] / stats[1]);
  } else {
    out.score = stats[0] > 0 ? 100.0 : 0.0;
  }
  return out;
}

TerResult corpus_ter(const std::vector<std::string>& hypotheses,
                     const std::vector<std::vector<std::string>>& reference_streams,
                     const TerOptions& options) {
  const SegmentReferences refs = gather_references(reference_streams, hypotheses.size());
  TerResult result;
  for (std::size_t i = 0; i < hypotheses.size(); ++i) {
    const TerStats stats = ter_segment_stats(hypotheses[i], refs.segments[i], options);
    result.stats[0] += stats[0];
    result.stats[1] += stats[1];
  }
  result.score = ter_from_stats(result.stats);
  result.signature = ter_signature(options, refs.nrefs);
  return result;
}

Signature ter_signature_fields(const TerOptions& options, const std::string& nrefs) {
  const auto yes_no = [](bool b) { return std::string(b ? "yes" : "no"); };
  Signature sig;
  sig.nrefs = nrefs;
  sig.fields = {{"case", "c", options.case_sensitive ? "mixed" : "lc"},
                {"tok", "t", "tercom"},
                {"norm", "nr", yes_no(options.normalized)},
                {"punct", "pn", yes_no(!options.no_punct)},
                {"asian", "as", yes_no(options.asian_support)}};
  return sig;
}

std::string ter_signature(const TerOptions& options, const std::string& nrefs) {
  return ter_signature_fields(options, nrefs).format();
}

}  // namespace nmt::eval
