// manifest.json: the shards of each split, their sizes and checksums, the vocabulary and the
// resolved config; written and read here, and every shard checked against it.
#include "preprocess/shard_manifest.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "common/atomic_file.h"
#include "common/json_fields.h"
#include "common/progress.h"
#include "common/sha256.h"

namespace nmt::preprocess {

using nlohmann::json;

namespace {

// `path` is where `j` sits in manifest.json, for the errors.
std::map<std::string, std::int64_t> counts_from_json(const json& j, const std::string& path) {
  const Fields fields = object_fields(j, path);
  std::map<std::string, std::int64_t> counts;
  for (const auto& item : j.items()) counts[item.key()] = fields.count(item.key().c_str());
  return counts;
}

CleaningStats cleaning_from_json(const json& j, const std::string& path) {
  const Fields fields = object_fields(j, path);
  CleaningStats stats;
  stats.read = fields.count("read");
  stats.kept = fields.count("kept");
  stats.dropped = counts_from_json(fields.object("dropped"), fields.path("dropped"));
  stats.repaired = counts_from_json(fields.object("repaired"), fields.path("repaired"));
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
          {"cleaning", cleaning_to_json(split.cleaning)},
          {"shards", shards}};
}

// A file the manifest names: a plain name of a file beside it, never a path that leaves the folder.
std::string file_name(const Fields& fields) {
  std::string name = fields.text("file");
  if (name == "." || name == ".." || name.find('/') != std::string::npos ||
      name.find('\0') != std::string::npos) {
    bad_field(fields.path("file"),
              fmt::format("'{}' is not the name of a file in the output folder", name));
  }
  return name;
}

SplitManifest split_from_json(const std::string& name, const json& j) {
  const std::string path = "splits." + name;
  const Fields fields = object_fields(j, path);
  SplitManifest split;
  split.name = name;
  split.sources = j.at("sources").get<std::vector<std::string>>();
  split.cleaning = cleaning_from_json(fields.object("cleaning"), fields.path("cleaning"));
  const std::string shards_path = fields.path("shards");
  std::ptrdiff_t index = 0;
  for (const auto& s : fields.array("shards")) {
    const Fields shard = object_fields(s, shards_path, index++);
    split.shards.push_back({file_name(shard), shard.count("pairs"), shard.count("src_tokens"),
                            shard.count("tgt_tokens"), shard.string("sha256"),
                            shard.optional_integer("bytes").value_or(0)});
    if (split.shards.back().bytes < 0) bad_field(shard.path("bytes"), "must not be negative");
  }
  return split;
}

}  // namespace

json cleaning_to_json(const CleaningStats& stats) {
  return {{"read", stats.read},
          {"kept", stats.kept},
          {"dropped", stats.dropped},
          {"repaired", stats.repaired}};
}

void check_shard_sha256(const std::string& path, const ShardInfo& info) {
  if (sha256_file(path) != info.sha256) {
    throw std::runtime_error(path +
                             ": SHA-256 differs from manifest.json: the file was changed or "
                             "damaged; re-run nmt-preprocess");
  }
}

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
    const Fields top = object_fields(j, "");
    Manifest m;
    m.format_version = top.integer("format_version");
    if (top.string("format") != kShardFormat || m.format_version != kShardFormatVersion) {
      throw std::runtime_error(
          fmt::format("format version {} but this build reads {}; re-run "
                      "nmt-preprocess",
                      m.format_version, kShardFormatVersion));
    }
    const Fields vocab = object_fields(top.object("vocab"), "vocab");
    m.vocab_file = file_name(vocab);
    m.vocab_sha256 = vocab.string("sha256");
    m.vocab_size = vocab.count("size");
    m.vocab_type = vocab.string("type");
    for (const auto& [name, split] : top.object("splits").items())
      m.splits.push_back(split_from_json(name, split));
    m.config = j.value("config", "");
    return m;
  } catch (const json::exception& e) {
    throw std::runtime_error(path + ": malformed manifest: " + e.what());
  } catch (const FieldError& e) {
    throw std::runtime_error(path + ": malformed manifest: " + e.what());
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
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
      check_shard_sha256(path, info);
      done += static_cast<std::int64_t>(std::filesystem::file_size(path));
      progress.update(done, total > 0 ? static_cast<double>(done) / total : -1.0);
    }
  }
  progress.finish(done);
}

}  // namespace nmt::preprocess
