#pragma once
// Corpus and sentence BLEU (Papineni et al. 2002) exactly as sacreBLEU 2.x computes them
// (metrics/bleu.py, metrics/base.py, metrics/helpers.py): its 13a, none, intl, char and zh
// tokenizers, n-grams up to 4 clipped against the per-n-gram maximum over references, brevity
// penalty against the closest reference length (ties: the shorter), smoothing 'exp' by default,
// statistics summed over segments before the score is computed, and "effective order" (orders
// without any hypothesis n-gram left out of the mean) for sentence BLEU. Also the corpus
// conventions all metrics share: an empty reference line is a reference with no words, as in
// sacreBLEU 2.x (its _cache_references drops only missing, None, references, which a file never
// yields; a segment whose references are all empty is scored, not refused), how its command line
// splits files into lines, and the text line sacreBLEU prints.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "eval/metrics/signature.h"

namespace nmt::eval {

inline constexpr int kBleuMaxOrder = 4;

struct BleuOptions {
  bool lowercase = false;              // -lc: Python str.lower() before tokenizing
  std::string tokenize = "13a";        // -tok: 13a, none, intl, char or zh
  std::string smooth = "exp";          // -s: exp, none, floor or add-k
  std::optional<double> smooth_value;  // -sv: floor defaults to 0.1, add-k to 1
  bool force = false;                  // --force: do not count lines ending in " ." (warning)
  bool effective_order = false;  // leave out orders without hypothesis n-grams (sentence BLEU)

  // Throws std::invalid_argument for an unknown tokenizer or smoothing method.
  void validate() const;
};

// Sufficient statistics of one segment, or of a corpus once summed.
struct BleuStats {
  std::int64_t hyp_len = 0;
  std::int64_t ref_len = 0;                           // closest reference length
  std::array<std::int64_t, kBleuMaxOrder> correct{};  // clipped n-gram matches per order
  std::array<std::int64_t, kBleuMaxOrder> total{};    // hypothesis n-grams per order

  BleuStats& operator+=(const BleuStats& other);
};

struct BleuScore {
  double score = 0.0;                              // 0..100
  std::array<double, kBleuMaxOrder> precisions{};  // 0..100, after smoothing
  double bp = 0.0;                                 // brevity penalty
  double ratio = 0.0;                              // hyp_len / ref_len (0 without reference words)
  std::int64_t hyp_len = 0;
  std::int64_t ref_len = 0;

  // sacreBLEU's verbose part: "66.1/41.3/27.9/19.2 (BP = 0.985 ratio = 0.985 hyp_len = ...)".
  std::string verbose() const;
};

struct BleuResult {
  BleuScore score;
  BleuStats stats;        // summed over the corpus
  std::string signature;  // nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:nmt-bleu-2.4.0
  int tokenized_period_lines;  // hypotheses ending in " ." (sacreBLEU warns at 100)
};

// Lowercases (optionally) and tokenizes one segment as BLEU sees it.
std::string bleu_preprocess(std::string_view segment, const BleuOptions& options);

// Statistics of one hypothesis against its (non-empty) references; both raw, not preprocessed.
BleuStats bleu_segment_stats(std::string_view hypothesis,
                             const std::vector<std::string_view>& references,
                             const BleuOptions& options);

// sacreBLEU's compute_bleu on summed statistics; effective order as options.effective_order says
// (off for corpus BLEU, as in sacreBLEU's corpus mode).
BleuScore bleu_from_stats(const BleuStats& stats, const BleuOptions& options);

// sacreBLEU's BLEU(effective_order=True).sentence_score(hypothesis, references), i.e. what
// `sacrebleu -sl` prints per line: effective order is switched on whatever `options` says. Raw
// inputs; empty references count as references with no words.
BleuScore sentence_bleu(std::string_view hypothesis,
                        const std::vector<std::string_view>& references,
                        const BleuOptions& options);

// Corpus BLEU of `hypotheses` against one or more reference streams, each as long as
// `hypotheses`. Throws std::invalid_argument on a length mismatch or no hypotheses.
BleuResult corpus_bleu(const std::vector<std::string>& hypotheses,
                       const std::vector<std::vector<std::string>>& reference_streams,
                       const BleuOptions& options);

// "smooth" field: exp, none, floor[0.10], add-k[1.00]; "eff" from options.effective_order.
Signature bleu_signature_fields(const BleuOptions& options, const std::string& nrefs);
std::string bleu_signature(const BleuOptions& options, const std::string& nrefs);

// ---- Shared by BLEU and chrF -----------------------------------------------------------------

// The references of every segment, and the "nrefs" signature value.
struct SegmentReferences {
  std::vector<std::vector<std::string_view>> segments;
  std::string nrefs;  // the number of streams (sacreBLEU's "var" needs missing references)
};

// Checks that there are hypotheses and that every stream has `num_hypotheses` lines
// (std::invalid_argument naming the stream index and both counts otherwise). Empty lines stay
// references (of no words), as in sacreBLEU 2.x: they still count in nrefs, a segment whose
// references are all empty is scored (BLEU: no matches, reference length 0; chrF: 0; TER: one
// edit per hypothesis word, 0 for an empty hypothesis).
SegmentReferences gather_references(const std::vector<std::vector<std::string>>& reference_streams,
                                    std::size_t num_hypotheses);

// Splits file contents into lines the way sacreBLEU's command line reads them: files are opened
// with newline="\n" (only \n ends a line; a \r stays and is later stripped as whitespace), stdin
// through a default TextIOWrapper (universal newlines: \n, \r\n and \r all end a line). A final
// line without a terminator counts; an empty input has no lines. Every line is right-stripped
// (str.rstrip()), as sacreBLEU does for hypotheses and references. Throws std::invalid_argument
// naming `source` and the 1-based line when a line is not valid UTF-8.
std::vector<std::string> split_lines(std::string_view data, const std::string& source,
                                     bool universal_newlines);

// sacreBLEU's text line: "NAME|SIGNATURE = SCORE VERBOSE" (no "|SIGNATURE" when empty, no
// verbose part when empty), the score with `width` decimals.
std::string format_score_line(const std::string& name, double score, int width,
                              const std::string& signature, const std::string& verbose);

}  // namespace nmt::eval
