#pragma once
// Tiny generated training data and configs for trainer tests: an invertible toy "translation"
// (ids mapped and reversed) that a small model learns in seconds.

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "preprocess/shard_format.h"
#include "test_utils.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/config/train_config.h"
#include "trainer/model/transformer.h"
#include "trainer/train/metrics_sink.h"

namespace nmt::testing {

constexpr std::int64_t kVocab = 24;

// Pair i: a pseudo-random source of 3..8 ids in [4, kVocab) and its "translation": each id mapped
// to another and the order reversed.
inline std::pair<std::vector<std::int32_t>, std::vector<std::int32_t>> make_pair(int i) {
  std::vector<std::int32_t> src, tgt;
  std::uint32_t state = 977u * static_cast<std::uint32_t>(i) + 13u;
  for (int k = 0; k < 3 + i % 6; ++k) {
    state = state * 1103515245u + 12345u;
    src.push_back(static_cast<std::int32_t>(4 + (state >> 16) % (kVocab - 4)));
  }
  for (auto it = src.rbegin(); it != src.rend(); ++it) tgt.push_back(4 + (*it * 7) % (kVocab - 4));
  return {src, tgt};
}

inline void write_split(const std::string& dir, const std::string& name, int pairs,
                        preprocess::Manifest& manifest) {
  preprocess::ShardWriter writer(dir, {name, kVocab, manifest.vocab_sha256, {}, {}}, 1000, 0);
  for (int i = 0; i < pairs; ++i) {
    const auto [src, tgt] = make_pair(i);
    writer.add(src, tgt, i);
  }
  preprocess::SplitManifest split;
  split.name = name;
  split.shards = writer.finish();
  manifest.splits.push_back(split);
}

// `vocab_sha256` stands for the hash of the SentencePiece model the shards were made with.
inline std::string write_data(const TempDir& dir, int pairs, const std::string& name = "data",
                              const std::string& vocab_sha256 = "tiny") {
  const std::string data = dir.file(name);
  std::filesystem::create_directories(data);
  preprocess::Manifest manifest;
  manifest.vocab_sha256 = vocab_sha256;
  manifest.vocab_size = kVocab;
  write_split(data, "train", pairs, manifest);
  write_split(data, "valid", 16, manifest);
  preprocess::write_manifest(data, manifest);
  return data;
}

inline RunConfig tiny_config(const std::string& data_dir) {
  RunConfig c;
  c.model.vocab_size = kVocab;
  c.model.layers = 2;
  c.model.d_model = 64;
  c.model.d_ff = 128;
  c.model.heads = 4;
  c.model.d_k = c.model.d_v = 16;
  c.model.dropout = 0.1;
  c.data.dir = data_dir;
  c.data.max_src_tokens = c.data.max_tgt_tokens = 200;
  c.train.warmup_steps = 50;
  c.train.lr_factor = 0.3;  // peak lr 0.3 / sqrt(64 * 50) = 5e-3
  c.train.log_every = 50;
  c.train.validate_every = 25;
  // The figures these tests assert were measured in fp32; auto would pick bf16 on some CPUs (and
  // bf16 has tests of its own).
  c.train.precision = runtime::Precision::kFp32;
  // One thread, as the test processes run (tests/CMakeLists.txt): threads 0 takes every CPU.
  c.train.threads = 1;
  c.checkpoint.every_steps = 10;
  c.checkpoint.keep_last = 3;
  return c;
}

inline std::shared_ptr<MetricsSink> sink_in(const std::string& run_dir) {
  std::filesystem::create_directories(run_dir);
  return std::make_shared<train::JsonlMetricsSink>(run_dir + "/metrics.jsonl");
}

inline model::Transformer load_model(const std::string& path, const RunConfig& config) {
  model::Transformer model(config.model);
  checkpoint::load_checkpoint(path, *model, nullptr, config);
  return model;
}

}  // namespace nmt::testing
