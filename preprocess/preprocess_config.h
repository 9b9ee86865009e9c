#pragma once
// The configuration of nmt-preprocess: one plain struct per section, defaults for WMT14-scale
// data, loaded from YAML in one place (load_preprocess_config) and checked by validate().
//
//   out: data/wmt14-en-de
//   threads: 8
//   corpora:
//     train:
//       - {source: europarl-v7.de-en.en, target: europarl-v7.de-en.de}
//       - {source: news-commentary-v14.de-en.tsv, format: tsv, columns: [1, 0]}
//     valid: [{source: newstest2013-src.en.sgm, target: newstest2013-ref.de.sgm}]
//   vocab: {type: bpe, size: 37000}
//   cleaning: {max_words: 250, max_ratio: 3.0, dedupe: true}
//   shards: {pairs_per_shard: 1000000, compression: 0}
//   sampling: {copies: 0, alpha: 0.1, seed: 1}   # BPE-dropout copies of the train split

#include <cstdint>
#include <string>
#include <vector>

#include "preprocess/cleaning.h"
#include "preprocess/corpus_reader.h"
#include "preprocess/vocabulary.h"

namespace nmt::preprocess {

struct ShardOptions {
  std::int64_t pairs_per_shard = 1000000;  // pairs per HDF5 file
  int compression = 0;                     // deflate level 0-9; 0 writes contiguous data (fastest)
};

struct SplitCorpora {
  std::string name;                 // train, valid or test
  std::vector<CorpusSpec> corpora;  // read in order, concatenated
};

struct PreprocessConfig {
  std::string out;         // output directory; must not exist unless overwrite
  bool overwrite = false;  // replace an existing output directory (atomically, at the end)
  std::string spm_model;   // reuse this SentencePiece model instead of training one
  int threads = 1;         // encoding threads (the output is identical for any number)
  std::vector<SplitCorpora> splits{{"train", {}}, {"valid", {}}, {"test", {}}};
  // Type bpe, 37,000 pieces: the paper's WMT14 vocabulary. vocab.threads (trainer threads) is
  // separate from `threads` because SentencePiece records it in the model, changing its bytes.
  VocabularyOptions vocab;
  CleaningOptions cleaning;
  ShardOptions shards;
  SamplingOptions sampling;  // subword regularization of the train split (off by default)

  SplitCorpora& split(const std::string& name);
  const SplitCorpora& split(const std::string& name) const;
  void validate() const;  // throws std::invalid_argument naming the field
};

// Reads a YAML file (strict: unknown keys and wrong types are errors naming file, line and key)
// and applies --set style overrides ("vocab.size=8000"). An empty path starts from the defaults.
PreprocessConfig load_preprocess_config(const std::string& path,
                                        const std::vector<std::string>& overrides = {});

// The resolved config as YAML, stored in the manifest so a run can be repeated.
std::string to_yaml(const PreprocessConfig& config);

}  // namespace nmt::preprocess
