#pragma once
// Translation of many sentences: sorted by length into token-budget batches (little padding),
// decoded with beam search (or greedily), and returned in input order. Text in and out goes
// through the run's SentencePiece model, after the same normalisation preprocessing applied.
// A source longer than the model's source positions is truncated (the default, with a warning) or
// split into pieces that fit, translated piece by piece and joined (LongInputs).
// Text that is not clean UTF-8 is still translated, one result per line, with a warning naming
// the line: each byte that is part of no well-formed UTF-8 sequence becomes U+FFFD and control
// characters (NUL, ESC...; a tab becomes a space) are removed, as preprocessing does to corpora.

#include <c10/core/Device.h>

#include <cstdint>
#include <string>
#include <vector>

#include "common/named_choices.h"
#include "preprocess/vocabulary.h"
#include "trainer/config/precision_mode.h"
#include "trainer/decode/beam_search.h"
#include "trainer/decode/decode_options.h"
#include "trainer/model/transformer.h"

namespace nmt::decode {

// What to do with a source longer than the model's source positions.
enum class LongInputs {
  kTruncate,  // translate its first pieces only (a warning names the line)
  kSplit,     // cut it into pieces that fit, translate each, join the translations with a space
};
inline constexpr NamedChoices<LongInputs, 2> kLongInputs{
    {{{LongInputs::kTruncate, "truncate"}, {LongInputs::kSplit, "split"}}}};

// Padded source tokens per batch times the decoder rows each sentence takes: 4,000 for greedy,
// 1,000 for beam 4, the fastest measured on a CPU (docs/decoding.md, "Speed and memory on a
// CPU"); the batch's decoder memory grows with it.
inline constexpr std::int64_t kBatchRowTokens = 4000;

struct TranslateOptions;
// The batch size translate_ids uses: batch_tokens, else kBatchRowTokens / the rows each sentence
// decodes (beam size, samples, 1).
std::int64_t auto_batch_tokens(const TranslateOptions& options);

struct TranslateOptions {
  DecodeOptions decode;  // the strategy and its options; the paper's beam search by default
  std::int64_t batch_tokens = 0;  // padded source tokens per batch; 0: auto_batch_tokens()
  // Resolved (not auto): bf16 and fp16 decode under autocast; int8 (CPU only) quantizes the
  // model given to the translator, which the caller shares, once and for good.
  runtime::Precision precision = runtime::Precision::kFp32;
  // fp32 on a CPU: the model's weights are packed once for the BLAS (TransformerImpl::pack_fp32,
  // where the BLAS can), which releases the fp32 weights of the model the caller shares: for
  // tools that load a model only to decode with it (nmt-translate), never for one in training.
  bool packed_weights = false;
  // Batches decoded at once on a CPU, each by its own thread with single-threaded kernels (the
  // BLAS and LibTorch's intra-op pool, runtime::single_threaded_kernels_here): a decoding step's
  // products are small, and they keep the CPUs busier side by side than split across threads.
  // 1: one batch at a time, in the kernels' own threads. Tools set it to their CPU threads. A
  // batch's result does not depend on which worker decodes it.
  int workers = 1;
  LongInputs long_inputs = LongInputs::kTruncate;  // sources that do not fit
};

// Input lines of one kind (invalid UTF-8, control characters): all counted, the first few
// remembered by number for the log.
class LineTally {
 public:
  static constexpr std::size_t kNamed = 5;  // lines remembered (and warned about one by one)

  void add(std::int64_t line);  // 1-based; 0 (unknown) is counted but not named
  std::int64_t count() const { return count_; }
  // Whether the line added last was among the first kNamed.
  bool named_last() const { return count_ <= static_cast<std::int64_t>(kNamed); }
  // "line 2", "lines 2, 4, 6", "lines 1, 2, 3, 4, 5 and 7 more".
  std::string describe() const;

 private:
  std::int64_t count_ = 0;
  std::vector<std::int64_t> first_;
};

struct Translation {
  std::vector<Hypothesis> nbest;   // best first (decode.nbest of them)
  std::vector<std::string> texts;  // detokenized, one per hypothesis
  // > 1: the source was split; nbest then holds one hypothesis, the pieces' best ones joined
  // (tokens concatenated, log_prob and score summed), and texts their texts joined with a space.
  // 0: the source was empty and not decoded (one empty hypothesis and text).
  std::int64_t pieces = 1;
};

// How good a place for a cut the position before a subword is.
enum class Cut : std::uint8_t {
  kInside,    // inside a word
  kWord,      // before a word
  kSentence,  // before a word that follows sentence-final punctuation
};

// Where `ids` may be cut: one entry per id, for the position before it (SentencePiece marks a
// word's first piece with U+2581; sentence-final punctuation is . ! ? ; or an ellipsis, possibly
// followed by closing quotes or brackets).
std::vector<Cut> cut_points(const std::vector<std::int64_t>& ids,
                            const preprocess::Vocabulary& vocab);

// Cuts `ids` into consecutive pieces of at most `limit` ids (limit >= 1) that together are `ids`.
// Each cut is the last sentence boundary that keeps the piece within the limit, else the last word
// boundary, else exactly at the limit. `cuts` has one entry per id (see cut_points). A source that
// fits is one piece; an empty source is one empty piece.
std::vector<std::vector<std::int64_t>> split_source(const std::vector<std::int64_t>& ids,
                                                    const std::vector<Cut>& cuts,
                                                    std::size_t limit);

class Translator {
 public:
  Translator(model::Transformer model, const preprocess::Vocabulary& vocab, c10::Device device,
             TranslateOptions options);

  // Sources as subword ids without EOS, each at most source_limit() long; results in input order.
  // Sampling draws each source's tokens from its own generator, seeded from the sampling seed and
  // `keys[i]` (default: i), so a source's samples do not depend on which others share its batch.
  std::vector<std::vector<Hypothesis>> translate_ids(
      const std::vector<std::vector<std::int64_t>>& sources,
      const std::vector<std::uint64_t>& keys = {});
  // Sources of any length, as subword ids without EOS; detokenized results in input order. A
  // source longer than source_limit() is truncated or split as TranslateOptions::long_inputs says
  // (source i is named as line i + first_line in the log; sampling keys its generator by that line
  // number and the piece, so a line samples the same in any window). An empty source is not
  // decoded: its
  // translation is one empty hypothesis (score 0) with an empty text, and pieces 0.
  std::vector<Translation> translate_sources(const std::vector<std::vector<std::int64_t>>& sources,
                                             std::int64_t first_line = 1);
  // Raw text lines (the first is line `first_line` in the log); results in input order. A blank
  // line encodes to no ids, so it translates to an empty line.
  std::vector<Translation> translate_lines(const std::vector<std::string>& lines,
                                           std::int64_t first_line = 1);
  // Subword ids of a line as the model sees it (normalised, encoded). With LongInputs::kTruncate,
  // truncated to source_limit(), logged as a warning naming `line_number` (1-based; 0: unknown),
  // the line's length and the limit; with kSplit, whole (translate_sources splits it). Invalid
  // UTF-8 and control characters are repaired as the file comment says, counted in
  // invalid_utf8() and control_chars(), and warned about for the first lines of each kind.
  std::vector<std::int64_t> encode_line(const std::string& line,
                                        std::int64_t line_number = 0) const;

  // Cross-attention of the last decoder layer for one source and its translation, averaged over
  // heads: [output tokens + EOS, source tokens + EOS].
  at::Tensor alignment(const std::vector<std::int64_t>& source,
                       const std::vector<std::int64_t>& output);

  model::Transformer& model() { return model_; }
  // The longest source the model takes: its source positions less one for EOS.
  std::size_t source_limit() const;
  std::int64_t truncated() const { return truncated_; }              // sources truncated so far
  std::int64_t split() const { return split_; }                      // sources split so far
  const LineTally& invalid_utf8() const { return invalid_utf8_; }    // lines encoded so far
  const LineTally& control_chars() const { return control_chars_; }  // lines encoded so far

 private:
  std::vector<std::vector<Hypothesis>> translate_batch(
      const std::vector<std::vector<std::int64_t>>& sources,
      const std::vector<std::uint64_t>& keys);
  void truncate(std::vector<std::int64_t>& ids, std::int64_t line_number) const;

  model::Transformer model_;
  const preprocess::Vocabulary& vocab_;
  c10::Device device_;
  TranslateOptions options_;
  mutable std::int64_t truncated_ = 0;
  mutable LineTally invalid_utf8_;
  mutable LineTally control_chars_;
  std::int64_t split_ = 0;
};

}  // namespace nmt::decode
