#pragma once
// A tiny shard split for the data-path tests (batching, the batch stream, the loss's token count).

#include <cstdint>
#include <vector>

#include "preprocess/shard_format.h"
#include "test_utils.h"

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

}  // namespace nmt::testing
