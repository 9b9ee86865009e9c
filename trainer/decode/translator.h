#pragma once
// Translation of many sentences: sorted by length into token-budget batches (little padding),
// decoded with beam search (or greedily), and returned in input order. Text in and out goes
// through the run's SentencePiece model, after the same normalisation preprocessing applied.

#include <c10/core/Device.h>

#include <cstdint>
#include <string>
#include <vector>

#include "preprocess/vocabulary.h"
#include "trainer/decode/beam_search.h"
#include "trainer/model/transformer.h"
#include "trainer/runtime/precision_mode.h"

namespace nmt::decode {

struct TranslateOptions {
  bool greedy = false;
  BeamOptions beam;
  std::int64_t batch_tokens = 4000;                          // padded source tokens per batch
  runtime::Precision precision = runtime::Precision::kFp32;  // resolved (not auto): autocast
};

struct Translation {
  std::vector<Hypothesis> nbest;   // best first; greedy: one, with log_prob and score 0
  std::vector<std::string> texts;  // detokenized, one per hypothesis
};

class Translator {
 public:
  Translator(model::Transformer model, const preprocess::Vocabulary& vocab, c10::Device device,
             TranslateOptions options);

  // Sources as subword ids without EOS; results in input order.
  std::vector<std::vector<Hypothesis>> translate_ids(
      const std::vector<std::vector<std::int64_t>>& sources);
  // Raw text lines; results in input order.
  std::vector<Translation> translate_lines(const std::vector<std::string>& lines);
  // Subword ids of a line as the model sees it (normalised, encoded, truncated to fit). A
  // truncation is logged as a warning naming `line_number` (1-based; 0: unknown), the line's
  // length and the limit.
  std::vector<std::int64_t> encode_line(const std::string& line,
                                        std::int64_t line_number = 0) const;

  // Cross-attention of the last decoder layer for one source and its translation, averaged over
  // heads: [output tokens + EOS, source tokens + EOS].
  at::Tensor alignment(const std::vector<std::int64_t>& source,
                       const std::vector<std::int64_t>& output);

  model::Transformer& model() { return model_; }
  std::int64_t truncated() const { return truncated_; }

 private:
  std::vector<std::vector<Hypothesis>> translate_batch(
      const std::vector<std::vector<std::int64_t>>& sources);

  model::Transformer model_;
  const preprocess::Vocabulary& vocab_;
  c10::Device device_;
  TranslateOptions options_;
  mutable std::int64_t truncated_ = 0;
};

}  // namespace nmt::decode
