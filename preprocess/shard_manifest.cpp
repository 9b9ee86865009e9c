// manifest.json: the shards of each split, their sizes and checksums, the vocabulary and the
// resolved config; written and read here, and every shard checked against it.
#include "preprocess/shard_manifest.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "common/atomic_file.h"
#include "common/progress.h"
#include "common/sha256.h"

namespace nmt::preprocess {

using nlohmann::json;

namespace {

CleaningStats cleaning_from_json(const json& j) {
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
          {"cleaning", cleaning_to_json(split.cleaning)},
          {"shards", shards}};
}

// A file the manifest names: a plain name of a file beside it, never a path that leaves the folder.
std::string file_name(const json& j, const char* field) {
  std::string name = j.at("file").get<std::string>();
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos ||
      name.find('\0') != std::string::npos) {
    throw std::runtime_error(
        fmt::format("{} file '{}' is not the name of a file in the output folder", field, name));
  }
  return name;
}

SplitManifest split_from_json(const std::string& name, const json& j) {
  SplitManifest split;
  split.name = name;
  split.sources = j.at("sources").get<std::vector<std::string>>();
  split.cleaning = cleaning_from_json(j.at("cleaning"));
  for (const auto& s : j.at("shards")) {
    split.shards.push_back({file_name(s, "a shard's"), s.at("pairs").get<std::int64_t>(),
                            s.at("src_tokens").get<std::int64_t>(),
                            s.at("tgt_tokens").get<std::int64_t>(),
                            s.at("sha256").get<std::string>(), s.value("bytes", std::int64_t{0})});
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
    m.vocab_file = file_name(vocab, "the vocabulary's");
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
