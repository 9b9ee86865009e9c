#pragma once
// A tiny shard split for the data-path tests (batching, the batch stream, the loss's token count).

#include <cstdint>
#include <vector>

#include "preprocess/shard_format.h"
#include "test_utils.h"
#include "trainer/config/train_config.h"

namespace nmt::testing {

// Writes a tiny split with pairs of lengths (i % 9 + 1, i % 7 + 1).
inline preprocess::ShardDataset tiny_dataset(const TempDir& dir, int pairs) {
  preprocess::ShardHeader header{"train", 100, "v", {}, {}};
  preprocess::ShardWriter writer(dir.path().string(), header, 1000, 0);
  for (int i = 0; i < pairs; ++i) {
    writer.add(std::vector<std::int32_t>(static_cast<std::size_t>(i % 9 + 1), 4 + i % 50),
               std::vector<std::int32_t>(static_cast<std::size_t>(i % 7 + 1), 5 + i % 40), i);
  }
  preprocess::Manifest m;
  m.vocab_sha256 = "v";
  m.vocab_size = 100;
  preprocess::SplitManifest split;
  split.name = "train";
  split.shards = writer.finish();
  m.splits.push_back(split);
  preprocess::write_manifest(dir.path().string(), m);
  return preprocess::ShardDataset::open(dir.path().string(), "train");
}

// The data config's defaults with a budget of `tokens` source and `tokens` target tokens a batch.
inline DataConfig token_budget(std::int64_t tokens) {
  DataConfig config;
  config.max_src_tokens = tokens;
  config.max_tgt_tokens = tokens;
  return config;
}

}  // namespace nmt::testing
