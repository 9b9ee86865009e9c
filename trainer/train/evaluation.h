#pragma once
// Scores of a model on a shard split, shared by training-time validation and nmt-evaluate (the
// sweep's per-row dev figures): teacher-forced loss and perplexity per target token (paper
// Table 3's "PPL dev", per word piece), and corpus BLEU of its translations against the split's
// detokenized targets.

#include <c10/core/Device.h>

#include <cstdint>
#include <string>
#include <vector>

#include "preprocess/shard_format.h"
#include "preprocess/vocabulary.h"
#include "trainer/config/precision_mode.h"
#include "trainer/data/batching.h"
#include "trainer/distributed/communicator.h"
#include "trainer/model/transformer.h"

namespace nmt::train {

struct SplitScore {
  double nll = 0, loss = 0, ppl = 0;  // per target token; loss is label-smoothed
  std::int64_t tokens = 0;
};

// Teacher-forced scores over every batch of `batches` (sequential plan). With several ranks each
// scores its share (batches r, r + N, ...) and the sums are added over ranks. Leaves the model
// in training mode.
SplitScore score_split(model::Transformer& model, const data::TokenBatcher& batches,
                       double label_smoothing, runtime::Precision precision, c10::Device device,
                       const distributed::Communicator& comm);

struct BleuSettings {
  std::int64_t beam = 4;                                     // 1: greedy
  double alpha = 0.6;                                        // length penalty
  std::int64_t sentences = 0;                                // the first N pairs; 0: all
  runtime::Precision precision = runtime::Precision::kFp32;  // resolved (not auto)
  int workers = 1;  // batches decoded side by side on a CPU (decode::TranslateOptions::workers)
};

// The model's translations of `data`'s first settings.sentences pairs (all when 0), with their
// sources and references, all detokenized through `vocab`. Leaves the model in training mode.
struct SplitTranslations {
  std::vector<std::string> sources, references, hypotheses;
};
SplitTranslations split_translations(model::Transformer& model,
                                     const preprocess::ShardDataset& data,
                                     const preprocess::Vocabulary& vocab, c10::Device device,
                                     const BleuSettings& settings);

// Corpus BLEU (sacreBLEU defaults) of split_translations' hypotheses against its references.
double split_bleu(model::Transformer& model, const preprocess::ShardDataset& data,
                  const preprocess::Vocabulary& vocab, c10::Device device,
                  const BleuSettings& settings);

}  // namespace nmt::train
