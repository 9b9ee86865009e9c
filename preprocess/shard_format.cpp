#include "preprocess/shard_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>

#include "common/atomic_file.h"
#include "common/hdf5_file.h"
#include "common/progress.h"
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
                      {"sha256", s.sha256},
                      {"bytes", s.bytes}});
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
                            s.at("sha256").get<std::string>(), s.value("bytes", std::int64_t{0})});
  }
  return split;
}

// Where a 1-D dataset's elements lie in the file, when they can be mapped: stored contiguously
// (not chunked or compressed), in the machine's own integer type, and inside the file.
struct Extent {
  bool mappable = false;
  std::uint64_t offset = 0;
  std::int64_t count = 0;
};

Extent locate(hid_t file, const std::string& path, const char* name, hid_t native,
              std::size_t file_size) {
  const Hdf5Handle dataset(H5Dopen2(file, name, H5P_DEFAULT), H5Dclose);
  if (dataset.get() < 0) throw std::runtime_error(path + ": no dataset " + name);
  const Hdf5Handle space(H5Dget_space(dataset.get()), H5Sclose);
  hsize_t dims[1] = {0};
  if (H5Sget_simple_extent_ndims(space.get()) != 1 ||
      H5Sget_simple_extent_dims(space.get(), dims, nullptr) != 1) {
    throw std::runtime_error(path + ": " + name + " is not a 1-D dataset");
  }
  Extent extent;
  extent.count = static_cast<std::int64_t>(dims[0]);
  const Hdf5Handle type(H5Dget_type(dataset.get()), H5Tclose);
  const Hdf5Handle plist(H5Dget_create_plist(dataset.get()), H5Pclose);
  if (H5Tequal(type.get(), native) <= 0 || H5Pget_layout(plist.get()) != H5D_CONTIGUOUS) {
    return extent;
  }
  if (extent.count == 0) {
    extent.mappable = true;
    return extent;
  }
  const haddr_t offset = H5Dget_offset(dataset.get());
  const auto bytes = static_cast<std::uint64_t>(dims[0]) * H5Tget_size(native);
  if (offset == HADDR_UNDEF || offset + bytes > file_size) return extent;
  extent.mappable = true;
  extent.offset = offset;
  return extent;
}

template <typename T>
const T* at_extent(const MappedFile& map, const Extent& extent) {
  static const T kNone{};
  if (extent.count == 0) return &kNone;
  return reinterpret_cast<const T*>(map.data() + extent.offset);
}

void check_sha256(const std::string& path, const ShardInfo& info) {
  if (sha256_file(path) != info.sha256) {
    throw std::runtime_error(path +
                             ": SHA-256 differs from manifest.json: the file was changed or "
                             "damaged; re-run nmt-preprocess");
  }
}

std::string damaged(const std::string& path, const std::string& what) {
  return path + ": " + what + ": the shard is damaged; re-run nmt-preprocess";
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

Shard Shard::load(const std::string& path) {
  Shard shard;
  shard.path_ = path;
  {
    Hdf5File h5(path, Hdf5File::Mode::kRead);
    const std::string format = h5.string_attribute("/", "format");
    const std::int64_t version = h5.int_attribute("/", "format_version");
    if (format != kShardFormat || version != kShardFormatVersion) {
      throw std::runtime_error(
          fmt::format("{}: format '{}' version {}, but this build reads '{}' version {}: re-run "
                      "nmt-preprocess",
                      path, format, version, kShardFormat, kShardFormatVersion));
    }
    shard.header_.split = h5.string_attribute("/", "split");
    shard.header_.vocab_size = h5.int_attribute("/", "vocab_size");
    shard.header_.vocab_sha256 = h5.string_attribute("/", "vocab_sha256");
    shard.header_.sources =
        nlohmann::json::parse(h5.string_attribute("/", "sources")).get<std::vector<std::string>>();
    shard.pairs_ = h5.int_attribute("/", "num_pairs");
  }
  auto map = std::make_unique<MappedFile>(path);
  std::vector<Extent> extents;
  {
    const Hdf5Handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
    if (file.get() < 0) throw std::runtime_error(path + ": cannot open as HDF5");
    for (const auto& [name, type] : {std::pair{"/src/tokens", H5T_NATIVE_INT32},
                                     {"/src/offsets", H5T_NATIVE_INT64},
                                     {"/tgt/tokens", H5T_NATIVE_INT32},
                                     {"/tgt/offsets", H5T_NATIVE_INT64},
                                     {"/index", H5T_NATIVE_INT64}}) {
      extents.push_back(locate(file.get(), path, name, type, map->size()));
    }
  }
  const bool mappable =
      std::all_of(extents.begin(), extents.end(), [](const Extent& e) { return e.mappable; });
  if (mappable) {
    shard.src_ = {at_extent<std::int32_t>(*map, extents[0]), extents[0].count,
                  at_extent<std::int64_t>(*map, extents[1])};
    shard.tgt_ = {at_extent<std::int32_t>(*map, extents[2]), extents[2].count,
                  at_extent<std::int64_t>(*map, extents[3])};
    shard.index_ = at_extent<std::int64_t>(*map, extents[4]);
    shard.map_ = std::move(map);
  } else {
    map.reset();
    Hdf5File h5(path, Hdf5File::Mode::kRead);
    shard.owned_src_tokens_ = h5.read<std::int32_t>("/src/tokens");
    shard.owned_src_offsets_ = h5.read<std::int64_t>("/src/offsets");
    shard.owned_tgt_tokens_ = h5.read<std::int32_t>("/tgt/tokens");
    shard.owned_tgt_offsets_ = h5.read<std::int64_t>("/tgt/offsets");
    shard.owned_index_ = h5.read<std::int64_t>("/index");
    const auto count = [](const auto& v) { return static_cast<std::int64_t>(v.size()); };
    extents = {{false, 0, count(shard.owned_src_tokens_)},
               {false, 0, count(shard.owned_src_offsets_)},
               {false, 0, count(shard.owned_tgt_tokens_)},
               {false, 0, count(shard.owned_tgt_offsets_)},
               {false, 0, count(shard.owned_index_)}};
    shard.src_ = {shard.owned_src_tokens_.data(), extents[0].count,
                  shard.owned_src_offsets_.data()};
    shard.tgt_ = {shard.owned_tgt_tokens_.data(), extents[2].count,
                  shard.owned_tgt_offsets_.data()};
    shard.index_ = shard.owned_index_.data();
  }
  if (extents[4].count != shard.pairs_) {
    throw std::runtime_error(damaged(path, "num_pairs attribute disagrees with /index"));
  }
  for (const auto& [side, offsets, name] :
       {std::tuple{&shard.src_, &extents[1], "src"}, {&shard.tgt_, &extents[3], "tgt"}}) {
    if (offsets->count != shard.pairs_ + 1 || side->offsets[0] != 0 ||
        side->offsets[shard.pairs_] != side->token_count) {
      throw std::runtime_error(damaged(
          path, fmt::format("/{}/offsets is inconsistent ({} offsets for {} pairs and {} tokens)",
                            name, offsets->count, shard.pairs_, side->token_count)));
    }
  }
  return shard;
}

std::pair<std::int64_t, std::int64_t> Shard::bounds(const Side& side, const char* name,
                                                    std::int64_t i) const {
  if (i < 0 || i >= size()) {
    throw std::out_of_range(fmt::format("{}: pair {} of a shard with {} pairs", path_, i, size()));
  }
  const std::int64_t begin = side.offsets[i], end = side.offsets[i + 1];
  if (begin < 0 || end < begin || end > side.token_count) {
    throw std::runtime_error(damaged(
        path_,
        fmt::format("/{}/offsets of pair {} are out of order ({}, {})", name, i, begin, end)));
  }
  return {begin, end};
}

PairLengths Shard::lengths(std::int64_t i) const {
  const auto [src_begin, src_end] = bounds(src_, "src", i);
  const auto [tgt_begin, tgt_end] = bounds(tgt_, "tgt", i);
  return {src_end - src_begin, tgt_end - tgt_begin};
}

PairView Shard::pair(std::int64_t i) const {
  PairView view;
  for (const auto& [side, name, span] :
       {std::tuple{&src_, "src", &view.src}, {&tgt_, "tgt", &view.tgt}}) {
    const auto [begin, end] = bounds(*side, name, i);
    *span = {side->tokens + begin, static_cast<std::size_t>(end - begin)};
    for (const auto id : *span) {
      if (id < 0 || id >= header_.vocab_size) {
        throw std::runtime_error(
            fmt::format("{}: /{}/tokens of pair {} holds id {} outside the "
                        "vocabulary of {}",
                        path_, name, i, id, header_.vocab_size));
      }
    }
  }
  view.index = index_[i];
  return view;
}

void Shard::release_pages() const {
  if (map_) map_->release();
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
    std::error_code error;
    const auto bytes = std::filesystem::file_size(path, error);
    if (error) throw std::runtime_error(path + ": " + error.message());
    if (info.bytes != 0 && static_cast<std::int64_t>(bytes) != info.bytes) {
      throw std::runtime_error(fmt::format(
          "{}: {} bytes, but manifest.json records {}: the file was changed or damaged; re-run "
          "nmt-preprocess",
          path, bytes, info.bytes));
    }
    if (options.verify_checksums) check_sha256(path, info);
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

std::size_t ShardDataset::shard_of(std::int64_t i) const {
  if (i < 0 || i >= size()) {
    throw std::out_of_range(fmt::format("pair {} of a split with {} pairs", i, size()));
  }
  return static_cast<std::size_t>(std::upper_bound(starts_.begin(), starts_.end(), i) -
                                  starts_.begin());
}

PairView ShardDataset::pair(std::int64_t i) const {
  const auto k = shard_of(i);
  return shards_[k].pair(i - (k == 0 ? 0 : starts_[k - 1]));
}

PairLengths ShardDataset::lengths(std::int64_t i) const {
  const auto k = shard_of(i);
  return shards_[k].lengths(i - (k == 0 ? 0 : starts_[k - 1]));
}

void ShardDataset::release_pages() const {
  for (const auto& shard : shards_) shard.release_pages();
}

void verify_checksums(const std::string& dir) {
  const Manifest m = read_manifest(dir);
  std::int64_t total = 0, done = 0;
  for (const auto& split : m.splits) {
    for (const auto& info : split.shards) total += info.bytes;
  }
  ProgressMeter progress("verify " + dir, "bytes");
  for (const auto& split : m.splits) {
    for (const auto& info : split.shards) {
      const std::string path = (std::filesystem::path(dir) / info.file).string();
      if (!std::filesystem::exists(path)) throw std::runtime_error(path + ": missing");
      check_sha256(path, info);
      done += static_cast<std::int64_t>(std::filesystem::file_size(path));
      progress.update(done, total > 0 ? static_cast<double>(done) / total : -1.0);
    }
  }
  progress.finish(done);
}

}  // namespace nmt::preprocess
