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
//
// What each key does is written once, beside the key in the field lists of
// preprocess_config.cpp, which also drive loading and to_yaml; docs/config.md is their rendering
// (nmt-config-doc).

#include <cstdint>
#include <string>
#include <vector>

#include "common/config_reference.h"
#include "preprocess/cleaning.h"
#include "preprocess/corpus_reader.h"
#include "preprocess/vocabulary.h"

namespace nmt::preprocess {

struct ShardOptions {
  std::int64_t pairs_per_shard = 1000000;
  int compression = 0;
};

struct SplitCorpora {
  std::string name;                 // train, valid or test
  std::vector<CorpusSpec> corpora;  // read in order, concatenated
};

struct PreprocessConfig {
  std::string out;
  bool overwrite = false;
  std::string spm_model;
  int threads = 1;
  std::vector<SplitCorpora> splits{{"train", {}}, {"valid", {}}, {"test", {}}};
  VocabularyOptions vocab;
  CleaningOptions cleaning;
  ShardOptions shards;
  SamplingOptions sampling;

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

// Every key of the YAML, section by section, with the defaults of PreprocessConfig{}.
ConfigReference preprocess_config_reference();

}  // namespace nmt::preprocess
