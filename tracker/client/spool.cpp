#include "tracker/client/spool.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <stdexcept>

#include "common/append_file.h"
#include "common/atomic_file.h"

namespace nmt::tracker {

namespace {

using nlohmann::json;

bool is_known_kind(const std::string& kind) {
  return kind == "metrics" || kind == "evals" || kind == "artifacts" || kind == "status";
}

std::runtime_error io_error(const std::string& what, const std::string& path) {
  return std::runtime_error(what + " " + path + ": " + std::strerror(errno));
}

// Closes the descriptor on every path out.
struct FileDescriptor {
  int fd;
  ~FileDescriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

std::string encode_spool_entry(const SpoolEntry& entry) {
  return R"({"kind":)" + json(entry.kind).dump() + R"(,"run_id":)" +
         (entry.run_id ? std::to_string(*entry.run_id) : "null") + R"(,"body":)" + entry.body + "}";
}

SpoolEntry decode_spool_entry(const std::string& line) {
  const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("kind") || !j["kind"].is_string() ||
      !is_known_kind(j["kind"].get<std::string>()) || !j.contains("body") ||
      !j["body"].is_object() || !j.contains("run_id") ||
      !(j["run_id"].is_null() || j["run_id"].is_number_integer())) {
    throw std::invalid_argument("not a tracker spool entry: " + line.substr(0, 200));
  }
  SpoolEntry entry;
  entry.kind = j["kind"].get<std::string>();
  if (!j["run_id"].is_null()) entry.run_id = j["run_id"].get<std::int64_t>();
  const json& body = j["body"];
  entry.body = body.dump();
  if (entry.kind == "metrics") {
    if (!body.contains("points") || !body["points"].is_array() || !body.contains("sequence") ||
        !body["sequence"].is_number_integer()) {
      throw std::invalid_argument("metrics spool entry without points or sequence");
    }
    // A sequence as the daemon takes it (0 and up), short of the largest int64: the next client
    // starts past the spool's highest.
    const json& sequence = body["sequence"];
    if (!sequence.is_number_unsigned() ||
        sequence.get<std::uint64_t>() >=
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      throw std::invalid_argument("metrics spool entry whose sequence is not from 0 to 2^63 - 2");
    }
    entry.points = body["points"].size();
    entry.sequence = sequence.get<std::int64_t>();
  }
  return entry;
}

Spool::Spool(std::string path) : path_(std::move(path)) {
  std::ifstream in(path_, std::ios::binary);
  if (!in) return;
  std::string line;
  std::size_t bad = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    try {
      entries_.push_back(decode_spool_entry(line));
      points_ += entries_.back().points;
    } catch (const std::exception& e) {
      ++bad;
      spdlog::warn("tracker spool {}: skipping an unreadable line ({})", path_, e.what());
    }
  }
  if (bad > 0) rewrite();
  if (!entries_.empty()) {
    spdlog::info(
        "tracker spool {}: {} requests ({} metric points) left by an earlier client, "
        "to be replayed",
        path_, entries_.size(), points_);
  }
}

void Spool::append(const std::vector<SpoolEntry>& entries) {
  if (entries.empty()) return;
  std::string data;
  for (const auto& entry : entries) data += encode_spool_entry(entry) + "\n";
  const auto parent = std::filesystem::path(path_).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  // Whole lines or nothing: a failed append leaves no half line for the next one to glue onto.
  AppendFile file(path_);
  file.append(data);
  file.sync();
  for (const auto& entry : entries) {
    entries_.push_back(entry);
    points_ += entry.points;
  }
}

void Spool::drop_front(std::size_t count) {
  count = std::min(count, entries_.size());
  if (count == 0) return;
  for (std::size_t i = 0; i < count; ++i) {
    points_ -= entries_.front().points;
    entries_.pop_front();
  }
  rewrite();
}

std::optional<std::int64_t> Spool::max_sequence() const {
  std::optional<std::int64_t> result;
  for (const auto& entry : entries_) {
    if (entry.sequence && (!result || *entry.sequence > *result)) result = entry.sequence;
  }
  return result;
}

void Spool::rewrite() {
  if (entries_.empty()) {
    FileDescriptor file{::open(path_.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC)};
    if (file.fd < 0 && errno == ENOENT) return;
    if (file.fd < 0 || ::fsync(file.fd) != 0) throw io_error("cannot truncate the spool", path_);
    return;
  }
  std::string data;
  for (const auto& entry : entries_) data += encode_spool_entry(entry) + "\n";
  write_file_atomically(path_, data);
}

}  // namespace nmt::tracker
