// The shard format: writer and reader agree, pairs are reachable at random across shards, the
// manifest carries counts and checksums, and damaged or foreign files are refused by name. The
// layout is also read through the plain HDF5 C API exactly as README.md documents it.

#include "preprocess/shard_format.h"

#include <hdf5.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/hdf5_file.h"
#include "test_utils.h"

namespace nmt::preprocess {
namespace {

using testing::TempDir;

constexpr std::int64_t kVocab = 50;

std::vector<std::int32_t> tokens_for(std::int64_t i, int side) {
  std::vector<std::int32_t> t;
  for (std::int64_t k = 0; k < (i % 4) + side; ++k)
    t.push_back(static_cast<std::int32_t>(4 + (i * 7 + k) % (kVocab - 4)));
  return t;
}

// Seven pairs in shards of three: 3 + 3 + 1. Pair 0 has an empty source side.
Manifest write_dataset(const std::string& dir, int pairs = 7, int compression = 0) {
  ShardHeader header{"train", kVocab, "abc123", {"a.en + a.de (text)"}, {}};
  header.cleaning.read = pairs + 2;
  header.cleaning.kept = pairs;
  header.cleaning.dropped["empty"] = 2;
  ShardWriter writer(dir, header, 3, compression);
  for (int i = 0; i < pairs; ++i) writer.add(tokens_for(i, 0), tokens_for(i, 1), 10 + i);
  Manifest manifest;
  manifest.vocab_sha256 = "abc123";
  manifest.vocab_size = kVocab;
  manifest.vocab_type = "bpe";
  SplitManifest split;
  split.name = "train";
  split.sources = header.sources;
  split.cleaning = header.cleaning;
  split.shards = writer.finish();
  manifest.splits.push_back(split);
  write_manifest(dir, manifest);
  return manifest;
}

TEST(ShardFormat, WriteReadRandomAccessAcrossShards) {
  TempDir dir;
  const auto written = write_dataset(dir.path().string());
  ASSERT_EQ(written.splits[0].shards.size(), 3u);
  EXPECT_EQ(written.splits[0].shards[2].pairs, 1);
  const auto dataset = ShardDataset::open(dir.path().string(), "train");
  ASSERT_EQ(dataset.size(), 7);
  for (std::int64_t i : {6, 0, 3, 2, 5}) {
    const auto pair = dataset.pair(i);
    EXPECT_EQ(pair.src.to_vector(), tokens_for(i, 0)) << i;
    EXPECT_EQ(pair.tgt.to_vector(), tokens_for(i, 1)) << i;
    EXPECT_EQ(pair.index, 10 + i);
  }
  EXPECT_EQ(dataset.pair(0).src.size, 0u);
  std::int64_t visited = 0;
  for (const PairView& pair : dataset) {
    EXPECT_EQ(pair.index, 10 + visited);
    EXPECT_EQ(pair.tgt.to_vector(), tokens_for(visited, 1));
    ++visited;
  }
  EXPECT_EQ(visited, 7);
  EXPECT_THROW(dataset.pair(7), std::out_of_range);
  const auto m = dataset.manifest();
  EXPECT_EQ(m.split("train").pairs(), 7);
  EXPECT_EQ(m.split("train").cleaning.dropped.at("empty"), 2);
  EXPECT_EQ(m.split("train").shards[0].sha256.size(), 64u);
  NMT_EXPECT_THROW_WITH(m.split("test"), std::runtime_error, "no split 'test'", "train");
}

TEST(ShardFormat, LayoutMatchesTheDocumentationThroughTheCApi) {
  TempDir dir;
  write_dataset(dir.path().string());
  const auto path = (dir.path() / "train-00000.h5").string();
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const auto read_i64 = [&](const char* name) {
    const hid_t set = H5Dopen2(file, name, H5P_DEFAULT);
    const hid_t space = H5Dget_space(set);
    std::vector<std::int64_t> v(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
    H5Dread(set, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
    H5Sclose(space);
    H5Dclose(set);
    return v;
  };
  EXPECT_EQ(read_i64("/src/offsets"), (std::vector<std::int64_t>{0, 0, 1, 3}));
  EXPECT_EQ(read_i64("/tgt/offsets"), (std::vector<std::int64_t>{0, 1, 3, 6}));
  EXPECT_EQ(read_i64("/index"), (std::vector<std::int64_t>{10, 11, 12}));
  const hid_t tokens = H5Dopen2(file, "/src/tokens", H5P_DEFAULT);
  const hid_t type = H5Dget_type(tokens);
  EXPECT_EQ(H5Tget_class(type), H5T_INTEGER);
  EXPECT_EQ(H5Tget_size(type), 4u);  // int32
  H5Tclose(type);
  H5Dclose(tokens);
  H5Fclose(file);
  Hdf5Reader h5(path);
  EXPECT_EQ(h5.string_attribute("/", "format"), "nmt-shard");
  EXPECT_EQ(h5.int_attribute("/", "format_version"), kShardFormatVersion);
  EXPECT_EQ(h5.string_attribute("/", "split"), "train");
  EXPECT_EQ(h5.int_attribute("/", "num_pairs"), 3);
  EXPECT_EQ(h5.int_attribute("/", "vocab_size"), kVocab);
  EXPECT_EQ(h5.string_attribute("/", "vocab_sha256"), "abc123");
  EXPECT_NE(h5.string_attribute("/", "sources").find("a.en + a.de"), std::string::npos);
  EXPECT_NE(h5.string_attribute("/", "cleaning").find("\"empty\":2"), std::string::npos);
}

// Contiguous shards are memory-mapped, compressed ones read into memory: the same pairs either way,
// and the lengths come from the offsets alone.
TEST(ShardFormat, MappedAndCompressedShardsReadTheSame) {
  TempDir mapped_dir, packed_dir;
  write_dataset(mapped_dir.path().string(), 7, 0);
  write_dataset(packed_dir.path().string(), 7, 6);
  const auto mapped = ShardDataset::open(mapped_dir.path().string(), "train");
  const auto packed = ShardDataset::open(packed_dir.path().string(), "train");
  EXPECT_TRUE(Shard::load((mapped_dir.path() / "train-00000.h5").string()).mapped());
  EXPECT_FALSE(Shard::load((packed_dir.path() / "train-00000.h5").string()).mapped());
  ASSERT_EQ(mapped.size(), packed.size());
  for (std::int64_t i = 0; i < mapped.size(); ++i) {
    EXPECT_EQ(mapped.pair(i).src.to_vector(), packed.pair(i).src.to_vector()) << i;
    EXPECT_EQ(mapped.pair(i).tgt.to_vector(), packed.pair(i).tgt.to_vector()) << i;
    EXPECT_EQ(mapped.pair(i).index, packed.pair(i).index) << i;
    EXPECT_EQ(mapped.lengths(i).src, static_cast<std::int64_t>(tokens_for(i, 0).size()));
    EXPECT_EQ(packed.lengths(i).tgt, static_cast<std::int64_t>(tokens_for(i, 1).size()));
  }
  mapped.release_pages();  // pages come back from the page cache when read again
  EXPECT_EQ(mapped.pair(6).tgt.to_vector(), tokens_for(6, 1));
  std::int64_t scanned = 0;
  mapped.scan_lengths([&](std::int64_t i, const PairLengths& lengths) {
    EXPECT_EQ(i, scanned++);
    EXPECT_EQ(lengths.src, static_cast<std::int64_t>(tokens_for(i, 0).size()));
  });
  EXPECT_EQ(scanned, 7);
}

void damage_last_bytes(const std::filesystem::path& path) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(-8, std::ios::end);
  f.put('\x7f');
}

// Shards are hashed when written; an open checks sizes (cheap) and hashes only when asked, and
// nmt-preprocess --verify's check hashes them all.
TEST(ShardFormat, DamagedShardIsRefusedByChecksumWhenVerifiedAndBySize) {
  TempDir dir;
  const auto manifest = write_dataset(dir.path().string());
  EXPECT_GT(manifest.splits[0].shards[1].bytes, 0);
  EXPECT_EQ(read_manifest(dir.path().string()).splits[0].shards[1].bytes,
            manifest.splits[0].shards[1].bytes);
  verify_checksums(dir.path().string());
  const auto path = dir.path() / "train-00001.h5";
  damage_last_bytes(path);
  DatasetOptions verify;
  verify.verify_checksums = true;
  NMT_EXPECT_THROW_WITH(ShardDataset::open(dir.path().string(), "train", verify),
                        std::runtime_error, "train-00001.h5", "SHA-256");
  NMT_EXPECT_THROW_WITH(verify_checksums(dir.path().string()), std::runtime_error, "train-00001.h5",
                        "SHA-256");
  EXPECT_NO_THROW(ShardDataset::open(dir.path().string(), "train"));  // same size: not hashed

  std::filesystem::resize_file(path, std::filesystem::file_size(path) - 100);
  NMT_EXPECT_THROW_WITH(ShardDataset::open(dir.path().string(), "train"), std::runtime_error,
                        "train-00001.h5", "manifest.json records");
}

TEST(ShardFormat, VocabularyMismatchIsRefused) {
  TempDir dir;
  write_dataset(dir.path().string());
  DatasetOptions options;
  options.expect_vocab_sha256 = "fff999";
  NMT_EXPECT_THROW_WITH(ShardDataset::open(dir.path().string(), "train", options),
                        std::runtime_error, "vocabulary", "--spm-model");
}

// A shard's datasets as written by hand, unchecked.
struct RawShard {
  std::vector<std::int32_t> src_tokens, tgt_tokens;
  std::vector<std::int64_t> src_offsets, tgt_offsets, index;
};

// A current-version shard of split "train" (vocabulary of 10) holding `raw` as it is, one pair per
// index entry: for shards the writer would never produce.
void write_raw_shard(const std::string& path, const RawShard& raw) {
  Hdf5Writer h5(path);
  h5.set_attribute("/", "format", std::string("nmt-shard"));
  h5.set_attribute("/", "format_version", kShardFormatVersion);
  h5.set_attribute("/", "split", std::string("train"));
  h5.set_attribute("/", "num_pairs", static_cast<std::int64_t>(raw.index.size()));
  h5.set_attribute("/", "vocab_size", std::int64_t{10});
  h5.set_attribute("/", "vocab_sha256", std::string("x"));
  h5.set_attribute("/", "sources", std::string("[]"));
  h5.write("/src/tokens", raw.src_tokens);
  h5.write("/tgt/tokens", raw.tgt_tokens);
  h5.write("/src/offsets", raw.src_offsets);
  h5.write("/tgt/offsets", raw.tgt_offsets);
  h5.write("/index", raw.index);
  h5.save(path);
}

TEST(ShardFormat, ForeignVersionAndBadTokensAreRefused) {
  TempDir dir;
  const auto path = dir.file("old.h5");
  {
    Hdf5Writer h5(path);
    h5.set_attribute("/", "format", std::string("nmt-shard"));
    h5.set_attribute("/", "format_version", std::int64_t{99});
    h5.save(path);
  }
  NMT_EXPECT_THROW_WITH(Shard::load(path), std::runtime_error, "old.h5", "version 99");

  const auto bad = dir.file("bad.h5");
  write_raw_shard(bad, {{4, 12}, {5}, {0, 2}, {0, 1}, {0}});
  const auto shard = Shard::load(bad);  // ids are checked as pairs are read
  EXPECT_EQ(shard.lengths(0).src, 2);
  NMT_EXPECT_THROW_WITH(shard.pair(0), std::runtime_error, "bad.h5", "id 12");

  const auto disordered = dir.file("disordered.h5");
  // Pair 0's source ends past the tokens.
  write_raw_shard(disordered, {{4, 5}, {5, 6}, {0, 3, 2}, {0, 1, 2}, {0, 1}});
  const auto broken = Shard::load(disordered);
  NMT_EXPECT_THROW_WITH(broken.lengths(0), std::runtime_error, "disordered.h5", "pair 0");
  NMT_EXPECT_THROW_WITH(broken.pair(1), std::runtime_error, "disordered.h5", "pair 1");
}

TEST(ShardFormat, MissingOrMalformedManifest) {
  TempDir dir;
  NMT_EXPECT_THROW_WITH(read_manifest(dir.path().string()), std::runtime_error, "manifest.json",
                        "cannot open");
  testing::write_text(dir.file("manifest.json"), "{\"format\": \"nmt-shard\"");
  NMT_EXPECT_THROW_WITH(read_manifest(dir.path().string()), std::runtime_error, "malformed");
}

// A number the manifest holds where it wants an integer of a range is refused by its field's path,
// never converted: 8.9e40 into an int64 is undefined behaviour, 2.5 would read as 2.
TEST(ShardFormat, ManifestNumbersOutOfTheirFieldsRangeAreRefusedByPath) {
  TempDir dir;
  write_dataset(dir.path().string());
  const std::string path = dir.file("manifest.json");
  std::ifstream in(path);
  const nlohmann::json original = nlohmann::json::parse(in);
  ASSERT_NO_THROW(read_manifest(dir.path().string()));
  const struct {
    const char* pointer;
    nlohmann::json value;
    const char* field;
    const char* problem;
  } cases[] = {
      {"/splits/train/shards/1/pairs", 8.88889e40, "splits.train.shards[1].pairs", "integer"},
      {"/splits/train/shards/0/src_tokens", 2.5, "splits.train.shards[0].src_tokens", "integer"},
      {"/splits/train/shards/2/bytes", -7, "splits.train.shards[2].bytes", "negative"},
      {"/splits/train/cleaning/dropped/empty", 1e300, "splits.train.cleaning.dropped.empty",
       "integer"},
      {"/splits/train/cleaning/read", -1, "splits.train.cleaning.read", "negative"},
      {"/vocab/size", "50", "vocab.size", "integer"},
      {"/format_version", 1e30, "format_version", "integer"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.pointer);
    nlohmann::json changed = original;
    changed[nlohmann::json::json_pointer(c.pointer)] = c.value;
    testing::write_text(path, changed.dump());
    NMT_EXPECT_THROW_WITH(read_manifest(dir.path().string()), std::runtime_error, "manifest.json",
                          c.field, c.problem);
  }
}

}  // namespace
}  // namespace nmt::preprocess
