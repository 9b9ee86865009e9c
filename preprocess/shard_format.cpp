#include "preprocess/shard_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "common/atomic_file.h"
#include "common/hdf5_file.h"
#include "common/sha256.h"

namespace nmt::preprocess {
namespace {

using nlohmann::json;

json stats_to_json(const CleaningStats& stats) {
  return {{"read", stats.read},
          {"kept", stats.kept},
          {"dropped", stats.dropped},
          {"repaired", stats.repaired}};
}

CleaningStats stats_from_json(const json& j) {
  CleaningStats stats;
  stats.read = j.at("read").get<std::int64_t>();
  stats.kept = j.at("kept").get<std::int64_t>();
  stats.dropped = j.at("dropped").get<std::map<std::string, std::int64_t>>();
  stats.repaired = j.at("repaired").get<std::map<std::string, std::int64_t>>();
  return stats;
}

json split_to_json(const SplitManifest& split) {
  json shards = json::array();
  for (const auto& s : split.shards) {
    shards.push_back({{"file", s.file},
                      {"pairs", s.pairs},
                      {"src_tokens", s.src_tokens},
                      {"tgt_tokens", s.tgt_tokens},
                      {"sha256", s.sha256}});
  }
  return {{"pairs", split.pairs()},
          {"sources", split.sources},
          {"cleaning", stats_to_json(split.cleaning)},
          {"shards", shards}};
}

SplitManifest split_from_json(const std::string& name, const json& j) {
  SplitManifest split;
  split.name = name;
  split.sources = j.at("sources").get<std::vector<std::string>>();
  split.cleaning = stats_from_json(j.at("cleaning"));
  for (const auto& s : j.at("shards")) {
    split.shards.push_back({s.at("file").get<std::string>(), s.at("pairs").get<std::int64_t>(),
                            s.at("src_tokens").get<std::int64_t>(),
                            s.at("tgt_tokens").get<std::int64_t>(),
                            s.at("sha256").get<std::string>()});
  }
  return split;
}

void check_offsets(const std::string& path, const char* side,
                   const std::vector<std::int64_t>& offsets, std::size_t tokens,
                   std::size_t pairs) {
  if (offsets.size() != pairs + 1 || offsets.front() != 0 ||
      offsets.back() != static_cast<std::int64_t>(tokens) ||
      !std::is_sorted(offsets.begin(), offsets.end())) {
    throw std::runtime_error(fmt::format(
        "{}: /{}/offsets is inconsistent ({} offsets for {} pairs and {} tokens): the shard is "
        "corrupt, re-run nmt-preprocess",
        path, side, offsets.size(), pairs, tokens));
  }
}

void check_token_range(const std::string& path, const char* side,
                       const std::vector<std::int32_t>& tokens, std::int64_t vocab_size) {
  const auto bad = std::find_if(tokens.begin(), tokens.end(),
                                [&](std::int32_t t) { return t < 0 || t >= vocab_size; });
  if (bad != tokens.end()) {
    throw std::runtime_error(fmt::format("{}: /{}/tokens holds id {} outside the vocabulary of {}",
                                         path, side, *bad, vocab_size));
  }
}

}  // namespace

std::int64_t SplitManifest::pairs() const {
  std::int64_t total = 0;
  for (const auto& s : shards) total += s.pairs;
  return total;
}

const SplitManifest& Manifest::split(const std::string& name) const {
  std::string known;
  for (const auto& s : splits) {
    if (s.name == name) return s;
    known += (known.empty() ? "" : ", ") + s.name;
  }
  throw std::runtime_error(fmt::format("no split '{}' in the manifest (it has: {})", name,
                                       known.empty() ? "none" : known));
}

void write_manifest(const std::string& dir, const Manifest& manifest) {
  json splits = json::object();
  for (const auto& s : manifest.splits) splits[s.name] = split_to_json(s);
  const json j = {{"format", kShardFormat},
                  {"format_version", manifest.format_version},
                  {"vocab",
                   {{"file", manifest.vocab_file},
                    {"sha256", manifest.vocab_sha256},
                    {"size", manifest.vocab_size},
                    {"type", manifest.vocab_type}}},
                  {"splits", splits},
                  {"config", manifest.config}};
  write_file_atomically((std::filesystem::path(dir) / kManifestFile).string(), j.dump(2) + "\n");
}

Manifest read_manifest(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / kManifestFile).string();
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open (is this an nmt-preprocess output?)");
  try {
    const json j = json::parse(in);
    Manifest m;
    m.format_version = j.at("format_version").get<std::int64_t>();
    if (j.at("format").get<std::string>() != kShardFormat ||
        m.format_version != kShardFormatVersion) {
      throw std::runtime_error(
          fmt::format("format version {} but this build reads {}; re-run "
                      "nmt-preprocess",
                      m.format_version, kShardFormatVersion));
    }
    const auto& vocab = j.at("vocab");
    m.vocab_file = vocab.at("file").get<std::string>();
    m.vocab_sha256 = vocab.at("sha256").get<std::string>();
    m.vocab_size = vocab.at("size").get<std::int64_t>();
    m.vocab_type = vocab.at("type").get<std::string>();
    for (const auto& [name, split] : j.at("splits").items())
      m.splits.push_back(split_from_json(name, split));
    m.config = j.value("config", "");
    return m;
  } catch (const json::exception& e) {
    throw std::runtime_error(path + ": malformed manifest: " + e.what());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
}

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
    Hdf5File h5(path, Hdf5File::Mode::kInMemory);  // written by save(): checked, fsynced
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
    h5.set_attribute("/", "cleaning", stats_to_json(header_.cleaning).dump());
    h5.save(path);  // durable before the directory holding it is renamed into place
  }
  written_.push_back({file, static_cast<std::int64_t>(index_.size()),
                      static_cast<std::int64_t>(src_tokens_.size()),
                      static_cast<std::int64_t>(tgt_tokens_.size()), sha256_file(path)});
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

Shard Shard::load(const std::string& path) {
  Hdf5File h5(path, Hdf5File::Mode::kRead);
  const std::string format = h5.string_attribute("/", "format");
  const std::int64_t version = h5.int_attribute("/", "format_version");
  if (format != kShardFormat || version != kShardFormatVersion) {
    throw std::runtime_error(fmt::format(
        "{}: format '{}' version {}, but this build reads '{}' version {}: re-run nmt-preprocess",
        path, format, version, kShardFormat, kShardFormatVersion));
  }
  Shard shard;
  shard.header_.split = h5.string_attribute("/", "split");
  shard.header_.vocab_size = h5.int_attribute("/", "vocab_size");
  shard.header_.vocab_sha256 = h5.string_attribute("/", "vocab_sha256");
  shard.header_.sources =
      nlohmann::json::parse(h5.string_attribute("/", "sources")).get<std::vector<std::string>>();
  shard.src_tokens_ = h5.read<std::int32_t>("/src/tokens");
  shard.tgt_tokens_ = h5.read<std::int32_t>("/tgt/tokens");
  shard.src_offsets_ = h5.read<std::int64_t>("/src/offsets");
  shard.tgt_offsets_ = h5.read<std::int64_t>("/tgt/offsets");
  shard.index_ = h5.read<std::int64_t>("/index");
  const auto pairs = shard.index_.size();
  if (h5.int_attribute("/", "num_pairs") != static_cast<std::int64_t>(pairs)) {
    throw std::runtime_error(path + ": num_pairs attribute disagrees with /index");
  }
  check_offsets(path, "src", shard.src_offsets_, shard.src_tokens_.size(), pairs);
  check_offsets(path, "tgt", shard.tgt_offsets_, shard.tgt_tokens_.size(), pairs);
  check_token_range(path, "src", shard.src_tokens_, shard.header_.vocab_size);
  check_token_range(path, "tgt", shard.tgt_tokens_, shard.header_.vocab_size);
  return shard;
}

PairView Shard::pair(std::int64_t i) const {
  if (i < 0 || i >= size()) {
    throw std::out_of_range(fmt::format("pair {} of a shard with {} pairs", i, size()));
  }
  const auto k = static_cast<std::size_t>(i);
  const auto span = [](const std::vector<std::int32_t>& tokens,
                       const std::vector<std::int64_t>& offsets, std::size_t j) {
    return TokenSpan{tokens.data() + offsets[j],
                     static_cast<std::size_t>(offsets[j + 1] - offsets[j])};
  };
  return {span(src_tokens_, src_offsets_, k), span(tgt_tokens_, tgt_offsets_, k), index_[k]};
}

ShardDataset ShardDataset::open(const std::string& dir, const std::string& split,
                                const DatasetOptions& options) {
  ShardDataset dataset;
  dataset.manifest_ = read_manifest(dir);
  const auto& m = dataset.manifest_;
  if (!options.expect_vocab_sha256.empty() && options.expect_vocab_sha256 != m.vocab_sha256) {
    throw std::runtime_error(fmt::format(
        "{}: shards use vocabulary {} but {} was expected: preprocess with the same --spm-model",
        dir, m.vocab_sha256.substr(0, 12), options.expect_vocab_sha256.substr(0, 12)));
  }
  std::int64_t total = 0;
  for (const auto& info : m.split(split).shards) {
    const std::string path = (std::filesystem::path(dir) / info.file).string();
    if (options.verify_checksums && sha256_file(path) != info.sha256) {
      throw std::runtime_error(path +
                               ": SHA-256 differs from manifest.json: the file was changed "
                               "or damaged; re-run nmt-preprocess");
    }
    Shard shard = Shard::load(path);
    if (shard.header().vocab_sha256 != m.vocab_sha256 || shard.size() != info.pairs) {
      throw std::runtime_error(path + ": vocabulary or pair count disagrees with manifest.json");
    }
    total += shard.size();
    dataset.starts_.push_back(total);
    dataset.shards_.push_back(std::move(shard));
  }
  return dataset;
}

PairView ShardDataset::pair(std::int64_t i) const {
  if (i < 0 || i >= size()) {
    throw std::out_of_range(fmt::format("pair {} of a split with {} pairs", i, size()));
  }
  const auto it = std::upper_bound(starts_.begin(), starts_.end(), i);
  const auto k = static_cast<std::size_t>(it - starts_.begin());
  const std::int64_t before = k == 0 ? 0 : starts_[k - 1];
  return shards_[k].pair(i - before);
}

}  // namespace nmt::preprocess
