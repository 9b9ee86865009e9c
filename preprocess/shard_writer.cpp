// ShardWriter (shard_format.h): a split's encoded pairs into shards of a fixed number of pairs,
// each written whole in memory, then atomically to disk.
#include <fmt/format.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/hdf5_file.h"
#include "common/sha256.h"
#include "preprocess/shard_format.h"
#include "preprocess/shard_manifest.h"

namespace nmt::preprocess {

ShardWriter::ShardWriter(std::string dir, ShardHeader header, std::int64_t pairs_per_shard,
                         int compression)
    : dir_(std::move(dir)),
      header_(std::move(header)),
      pairs_per_shard_(pairs_per_shard),
      compression_(compression) {
  if (pairs_per_shard_ < 1) throw std::invalid_argument("pairs_per_shard must be positive");
}

void ShardWriter::add(const std::vector<std::int32_t>& src, const std::vector<std::int32_t>& tgt,
                      std::int64_t index) {
  src_tokens_.insert(src_tokens_.end(), src.begin(), src.end());
  tgt_tokens_.insert(tgt_tokens_.end(), tgt.begin(), tgt.end());
  src_offsets_.push_back(static_cast<std::int64_t>(src_tokens_.size()));
  tgt_offsets_.push_back(static_cast<std::int64_t>(tgt_tokens_.size()));
  index_.push_back(index);
  if (static_cast<std::int64_t>(index_.size()) >= pairs_per_shard_) flush_shard();
}

void ShardWriter::flush_shard() {
  const auto shard_index = static_cast<std::int64_t>(written_.size());
  const std::string file = fmt::format("{}-{:05}.h5", header_.split, shard_index);
  const std::string path = (std::filesystem::path(dir_) / file).string();
  {
    Hdf5Writer h5(path);  // written by save(): checked, fsynced
    // Chunking only pays when compressing; contiguous data is the fastest to read back.
    const std::size_t chunk = compression_ > 0 ? (1u << 16) : 0;
    h5.write("/src/tokens", src_tokens_, chunk, compression_);
    h5.write("/src/offsets", src_offsets_, chunk, compression_);
    h5.write("/tgt/tokens", tgt_tokens_, chunk, compression_);
    h5.write("/tgt/offsets", tgt_offsets_, chunk, compression_);
    h5.write("/index", index_, chunk, compression_);
    h5.set_attribute("/", "format", std::string(kShardFormat));
    h5.set_attribute("/", "format_version", kShardFormatVersion);
    h5.set_attribute("/", "split", header_.split);
    h5.set_attribute("/", "shard_index", shard_index);
    h5.set_attribute("/", "num_pairs", static_cast<std::int64_t>(index_.size()));
    h5.set_attribute("/", "vocab_size", header_.vocab_size);
    h5.set_attribute("/", "vocab_sha256", header_.vocab_sha256);
    h5.set_attribute("/", "sources", nlohmann::json(header_.sources).dump());
    h5.set_attribute("/", "cleaning", cleaning_to_json(header_.cleaning).dump());
    h5.save(path);  // durable before the directory holding it is renamed into place
  }
  written_.push_back({file, static_cast<std::int64_t>(index_.size()),
                      static_cast<std::int64_t>(src_tokens_.size()),
                      static_cast<std::int64_t>(tgt_tokens_.size()), sha256_file(path),
                      static_cast<std::int64_t>(std::filesystem::file_size(path))});
  src_tokens_.clear();
  tgt_tokens_.clear();
  src_offsets_.assign(1, 0);
  tgt_offsets_.assign(1, 0);
  index_.clear();
}

std::vector<ShardInfo> ShardWriter::finish() {
  if (!index_.empty() || written_.empty()) flush_shard();
  return written_;
}

}  // namespace nmt::preprocess
