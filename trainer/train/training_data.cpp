#include "trainer/train/training_data.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <stdexcept>

#include "preprocess/vocabulary.h"

namespace nmt::train {

TrainingData::TrainingData(const RunConfig& config) : dir(config.data.dir) {
  preprocess::DatasetOptions options;
  options.verify_checksums = config.data.verify_checksums;
  train = preprocess::ShardDataset::open(dir, config.data.train_split, options);
  train_batches = std::make_unique<data::TokenBatcher>(train, config.data, config.train.seed);
  if (!config.data.valid_split.empty()) {
    preprocess::DatasetOptions same_vocab = options;
    same_vocab.expect_vocab_sha256 = train.manifest().vocab_sha256;
    valid = preprocess::ShardDataset::open(dir, config.data.valid_split, same_vocab);
    valid_batches = std::make_unique<data::TokenBatcher>(valid, config.data, config.train.seed);
  }
  spdlog::info("data: {} training pairs ({} longer than {} skipped), {} validation pairs",
               train_batches->eligible_pairs(), train_batches->skipped_too_long(),
               config.data.max_length, valid_batches ? valid_batches->eligible_pairs() : 0);
}

std::string TrainingData::vocabulary_to_embed() const {
  const auto& manifest = train.manifest();
  const std::string path = (std::filesystem::path(dir) / manifest.vocab_file).string();
  if (!std::filesystem::exists(path)) {
    spdlog::warn("{} not found: checkpoints will not carry their SentencePiece model", path);
    return {};
  }
  std::string model = preprocess::Vocabulary::load(path).serialized();
  const std::string sha = preprocess::Vocabulary::from_serialized(model, path).sha256();
  if (sha != manifest.vocab_sha256) {
    throw std::runtime_error(fmt::format(
        "{} has SHA-256 {}, but the shards' manifest records {}: the data folder mixes two "
        "preprocessing runs; preprocess it again",
        path, sha, manifest.vocab_sha256));
  }
  return model;
}

}  // namespace nmt::train
