// Shard and ShardDataset (shard_format.h): shards memory-mapped where they are stored
// contiguously, read into memory where compressed, and checked against the format and the
// manifest.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>

#include "common/hdf5_file.h"
#include "preprocess/shard_format.h"
#include "preprocess/shard_manifest.h"

namespace nmt::preprocess {
namespace {

// Where a 1-D dataset's elements lie in the file, when they can be mapped: stored contiguously
// (not chunked or compressed), in the machine's own integer type, inside the file and aligned.
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
  // The mapping starts on a page, so an array at an offset that is no multiple of its element's
  // size would be read through misaligned pointers (undefined behaviour): such a file is read
  // into memory instead. The shard writer aligns its arrays (Hdf5Writer).
  if (offset % H5Tget_size(native) != 0) return extent;
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

std::string damaged(const std::string& path, const std::string& what) {
  return path + ": " + what + ": the shard is damaged; re-run nmt-preprocess";
}

}  // namespace

Shard Shard::load(const std::string& path) {
  Shard shard;
  shard.path_ = path;
  {
    Hdf5Reader h5(path);
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
    try {
      shard.header_.sources = nlohmann::json::parse(h5.string_attribute("/", "sources"))
                                  .get<std::vector<std::string>>();
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(damaged(
          path, fmt::format("the sources attribute is not a JSON list of texts ({})", e.what())));
    }
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
    Hdf5Reader h5(path);
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
    if (options.verify_checksums) check_shard_sha256(path, info);
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

}  // namespace nmt::preprocess
