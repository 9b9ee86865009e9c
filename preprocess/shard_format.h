#pragma once
// The tokenized shard format: the one definition used by nmt-preprocess (writer) and the trainer
// and translator (reader). Documented for outside readers (h5py) in README.md, "Shard format".
//
// A preprocessed directory holds spm.model (the joint SentencePiece vocabulary), manifest.json and
// the shards <split>-NNNNN.h5. Each shard is HDF5:
//   /src/tokens   int32 [total source tokens]   subword ids, no BOS/EOS
//   /src/offsets  int64 [pairs + 1]             pair i is tokens[offsets[i] : offsets[i+1]]
//   /tgt/tokens, /tgt/offsets                   the same for the target side
//   /index        int64 [pairs]                 0-based position of the pair in its split's input
//   attributes on "/": format ("nmt-shard"), format_version, split, shard_index, num_pairs,
//   vocab_size, vocab_sha256, sources (JSON list), cleaning (JSON counts of the whole split)

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/mapped_file.h"
#include "preprocess/cleaning.h"

namespace nmt::preprocess {

inline constexpr const char* kShardFormat = "nmt-shard";
inline constexpr std::int64_t kShardFormatVersion = 1;
inline constexpr const char* kManifestFile = "manifest.json";
inline constexpr const char* kVocabularyFile = "spm.model";

struct ShardInfo {
  std::string file;  // relative to the directory
  std::int64_t pairs = 0;
  std::int64_t src_tokens = 0;
  std::int64_t tgt_tokens = 0;
  std::string sha256;
  std::int64_t bytes = 0;  // the file's size; 0: not recorded (an older manifest)
};

struct SplitManifest {
  std::string name;                  // train, valid, test
  std::vector<std::string> sources;  // CorpusSpec::describe() of each input corpus
  CleaningStats cleaning;
  std::vector<ShardInfo> shards;
  std::int64_t pairs() const;
};

struct Manifest {
  std::int64_t format_version = kShardFormatVersion;
  std::string vocab_file = kVocabularyFile;
  std::string vocab_sha256;
  std::int64_t vocab_size = 0;
  std::string vocab_type;  // bpe or unigram
  std::vector<SplitManifest> splits;
  std::string config;  // the resolved nmt-preprocess config, YAML

  const SplitManifest& split(const std::string& name) const;  // throws naming the known splits
};

void write_manifest(const std::string& dir, const Manifest& manifest);
// Throws std::runtime_error naming the file on a missing file, bad JSON or another version.
Manifest read_manifest(const std::string& dir);

// What every shard of a split shares.
struct ShardHeader {
  std::string split;
  std::int64_t vocab_size = 0;
  std::string vocab_sha256;
  std::vector<std::string> sources;
  CleaningStats cleaning;  // of the whole split: cleaning finishes before encoding starts
};

// Writes a split as shards of at most `pairs_per_shard` pairs. Memory: one shard's tokens.
class ShardWriter {
 public:
  ShardWriter(std::string dir, ShardHeader header, std::int64_t pairs_per_shard, int compression);
  void add(const std::vector<std::int32_t>& src, const std::vector<std::int32_t>& tgt,
           std::int64_t index);
  // Writes the last shard (an empty split still gets one) and returns every shard written.
  std::vector<ShardInfo> finish();

 private:
  void flush_shard();

  std::string dir_;
  ShardHeader header_;
  std::int64_t pairs_per_shard_;
  int compression_;
  std::vector<std::int32_t> src_tokens_, tgt_tokens_;
  std::vector<std::int64_t> src_offsets_{0}, tgt_offsets_{0}, index_;
  std::vector<ShardInfo> written_;
};

// A view of one side of one pair, valid while its Shard lives.
struct TokenSpan {
  const std::int32_t* data = nullptr;
  std::size_t size = 0;
  const std::int32_t* begin() const { return data; }
  const std::int32_t* end() const { return data + size; }
  std::vector<std::int32_t> to_vector() const { return {begin(), end()}; }
};

struct PairView {
  TokenSpan src;
  TokenSpan tgt;
  std::int64_t index = 0;
};

struct PairLengths {
  std::int64_t src = 0;  // subword tokens, without BOS/EOS
  std::int64_t tgt = 0;
};

// One shard file. Shards written contiguously (compression 0, nmt-preprocess's default) are
// memory-mapped: opening reads only the attributes and the offsets' ends, and a pair's pages are
// read when the pair is. Compressed shards are read into memory. Format, version, sizes and the
// ends of the offsets are checked at load; each pair's offsets when it is read, and pair() checks
// its token ids against the vocabulary: a damaged shard is refused naming the file and the pair.
class Shard {
 public:
  static Shard load(const std::string& path);
  std::int64_t size() const { return pairs_; }
  PairView pair(std::int64_t i) const;
  PairLengths lengths(std::int64_t i) const;  // offsets only: no token is read
  const ShardHeader& header() const { return header_; }
  const std::string& path() const { return path_; }
  bool mapped() const { return map_ != nullptr; }
  // Drops this process's mapped pages (the page cache keeps them); no-op for an unmapped shard.
  void release_pages() const;

 private:
  struct Side {
    const std::int32_t* tokens = nullptr;
    std::int64_t token_count = 0;
    const std::int64_t* offsets = nullptr;  // [pairs + 1]
  };
  std::pair<std::int64_t, std::int64_t> bounds(const Side& side, const char* name,
                                               std::int64_t i) const;

  std::string path_;
  ShardHeader header_;
  std::int64_t pairs_ = 0;
  std::unique_ptr<MappedFile> map_;
  // A compressed shard's arrays (empty when mapped); the Sides point into these or into map_.
  std::vector<std::int32_t> owned_src_tokens_, owned_tgt_tokens_;
  std::vector<std::int64_t> owned_src_offsets_, owned_tgt_offsets_, owned_index_;
  Side src_, tgt_;
  const std::int64_t* index_ = nullptr;
};

struct DatasetOptions {
  // SHA-256 of each shard against the manifest. nmt-preprocess hashes each shard as it writes it
  // and `nmt-preprocess --verify DIR` re-checks a copied directory; every open checks each
  // shard's size against the manifest.
  bool verify_checksums = false;
  std::string expect_vocab_sha256;  // when set, the split must use exactly this vocabulary
};

// All shards of one split of a preprocessed directory, mapped (see Shard), with random access and
// iteration in split order (for (const PairView& pair : dataset)). Memory: the pages of the pairs
// read since the last release_pages(), whatever the split's size.
class ShardDataset {
 public:
  class Iterator {
   public:
    Iterator(const ShardDataset* dataset, std::int64_t i) : dataset_(dataset), i_(i) {}
    PairView operator*() const { return dataset_->pair(i_); }
    Iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const Iterator& other) const { return i_ != other.i_; }

   private:
    const ShardDataset* dataset_;
    std::int64_t i_;
  };

  static ShardDataset open(const std::string& dir, const std::string& split,
                           const DatasetOptions& options = {});
  std::int64_t size() const { return starts_.empty() ? 0 : starts_.back(); }
  PairView pair(std::int64_t i) const;
  PairLengths lengths(std::int64_t i) const;
  // Calls fn(i, lengths) for every pair in split order, shard by shard, dropping each shard's
  // pages once it is read: a pass over a split of any size in the memory of one shard's offsets.
  template <typename Fn>
  void scan_lengths(Fn&& fn) const {
    std::int64_t i = 0;
    for (const auto& shard : shards_) {
      for (std::int64_t k = 0; k < shard.size(); ++k, ++i) fn(i, shard.lengths(k));
      shard.release_pages();
    }
  }
  void release_pages() const;
  Iterator begin() const { return {this, 0}; }
  Iterator end() const { return {this, size()}; }
  const Manifest& manifest() const { return manifest_; }

 private:
  std::size_t shard_of(std::int64_t i) const;

  Manifest manifest_;
  std::vector<Shard> shards_;
  std::vector<std::int64_t> starts_;  // cumulative pair counts; starts_[k] = pairs before shard k+1
};

// Hashes every shard of every split against manifest.json, logging progress (bytes/s, ETA).
// Throws std::runtime_error naming the first shard that differs or is missing.
void verify_checksums(const std::string& dir);

}  // namespace nmt::preprocess
