#pragma once
// A run's data: the training split and the optional validation split of the preprocessed shards
// (one vocabulary), their length-bucketed token batchers, and the SentencePiece model every
// checkpoint carries so that it translates on its own (checkpoint.h).

#include <memory>
#include <string>

#include "preprocess/shard_format.h"
#include "trainer/config/train_config.h"
#include "trainer/data/batching.h"

namespace nmt::train {

struct TrainingData {
  // Opens config.data's splits (the validation split must share the training split's
  // vocabulary) and logs their sizes.
  explicit TrainingData(const RunConfig& config);
  TrainingData(const TrainingData&) = delete;
  TrainingData& operator=(const TrainingData&) = delete;

  // The serialized SentencePiece model of the data folder, checked against the manifest's hash;
  // empty, with a warning, when the folder has none (shards made by hand).
  std::string vocabulary_to_embed() const;

  std::string dir;
  preprocess::ShardDataset train, valid;
  std::unique_ptr<data::TokenBatcher> train_batches;
  std::unique_ptr<data::TokenBatcher> valid_batches;  // null without a validation split
};

}  // namespace nmt::train
