#include "preprocess/output_dir.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <regex>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/atomic_file.h"
#include "preprocess/shard_format.h"

namespace nmt::preprocess {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTempInfix = ".tmp-";
constexpr const char* kOldInfix = ".old-";

fs::path sibling(const fs::path& out, const char* infix, long pid) {
  return out.parent_path() / (out.filename().string() + infix + std::to_string(pid));
}

// This process has not made its own directory yet, so one with its PID is an earlier run's.
bool process_exists(long pid) {
  if (pid == static_cast<long>(::getpid())) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

// The names a run writes into its temporary directory: the final files, the cleaned text of each
// split and the temporary names of atomic writes (NAME.tmp.PID).
bool written_by_a_run(const fs::directory_entry& entry) {
  static const std::regex kNames(
      R"((manifest\.json|spm\.model|\w+\.clean\.txt|\w+-[0-9]{5}\.h5)(\.tmp\.[0-9]+)?)");
  std::error_code ec;
  return entry.is_regular_file(ec) && std::regex_match(entry.path().filename().string(), kNames);
}

// The entries of `dir` that fail `keep`, at most a few, for a message.
template <typename Predicate>
std::vector<std::string> foreign_entries(const fs::path& dir, Predicate keep) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!keep(entry)) names.push_back(entry.path().filename().string());
  }
  return names;
}

std::string list_some(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < 3; ++i) text += (i ? ", " : "") + names[i];
  if (names.size() > 3) text += fmt::format(" and {} more", names.size() - 3);
  return text;
}

void remove_leftover(const fs::path& dir, const char* what) {
  std::error_code ec;
  fs::remove_all(dir, ec);
  if (ec) {
    spdlog::warn("{}: cannot remove this {} of an earlier run: {}", dir.string(), what,
                 ec.message());
  } else {
    spdlog::info("{}: removed the {} of an earlier run that no longer runs", dir.string(), what);
  }
}

}  // namespace

fs::path output_path(const std::string& out) {
  fs::path path = fs::absolute(out).lexically_normal();
  if (!path.has_filename() && path.has_parent_path()) path = path.parent_path();  // "DIR/"
  return path;
}

void check_replaceable(const fs::path& out) {
  const std::string refused = out.string() + ": --overwrite refused: ";
  const std::string advice = "; move or remove it yourself, or choose another --out";
  if (!fs::is_directory(out)) throw std::runtime_error(refused + "not a directory" + advice);
  if (!fs::exists(out / kManifestFile)) {
    throw std::runtime_error(refused + "it holds no " + kManifestFile +
                             ", so it is not the output of an earlier nmt-preprocess" + advice);
  }
  Manifest manifest;
  try {
    manifest = read_manifest(out.string());
  } catch (const std::exception& e) {
    throw std::runtime_error(refused + "its manifest cannot be read (" + e.what() + ")" + advice);
  }
  std::set<std::string> listed{kManifestFile, manifest.vocab_file};
  std::size_t shards = 0;
  for (const auto& split : manifest.splits) {
    for (const auto& shard : split.shards) listed.insert(shard.file), ++shards;
  }
  const auto foreign = foreign_entries(out, [&](const fs::directory_entry& entry) {
    std::error_code ec;
    return entry.is_regular_file(ec) && listed.count(entry.path().filename().string()) > 0;
  });
  if (!foreign.empty()) {
    throw std::runtime_error(fmt::format(
        "{}it holds {}, not part of the preprocessing output its manifest lists ({}, {} and {} "
        "shards){}",
        refused, list_some(foreign), kManifestFile, manifest.vocab_file, shards, advice));
  }
}

void clean_stale_leftovers(const fs::path& out) {
  const fs::path parent = out.parent_path();
  const std::string name = out.filename().string();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string entry_name = entry.path().filename().string();
    if (entry_name.rfind(name, 0) != 0) continue;
    const std::string rest = entry_name.substr(name.size());
    const bool temp = rest.rfind(kTempInfix, 0) == 0, old = rest.rfind(kOldInfix, 0) == 0;
    if (!temp && !old) continue;
    const std::string digits = rest.substr(5);  // both infixes have 5 characters
    if (digits.empty() || digits.size() > 9 ||
        digits.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    const long pid = std::stol(digits);
    if (process_exists(pid)) {
      spdlog::warn("{}: in use by process {} (another nmt-preprocess writing {}?); left alone",
                   entry.path().string(), pid, out.string());
      continue;
    }
    std::error_code dir_ec;
    if (!entry.is_directory(dir_ec)) continue;
    if (temp) {
      const auto foreign = foreign_entries(entry.path(), written_by_a_run);
      if (foreign.empty()) {
        remove_leftover(entry.path(), "temporary output");
      } else {
        spdlog::warn(
            "{}: looks like the temporary output of an earlier run but holds {}; left "
            "alone: remove it yourself",
            entry.path().string(), list_some(foreign));
      }
      continue;
    }
    try {
      check_replaceable(entry.path());
    } catch (const std::exception&) {
      spdlog::warn(
          "{}: looks like a previous output set aside by an interrupted --overwrite "
          "but is not one; left alone",
          entry.path().string());
      continue;
    }
    if (fs::exists(out / kManifestFile)) {
      remove_leftover(entry.path(), "replaced output");
    } else {
      spdlog::warn(
          "{}: the previous output, set aside by an interrupted --overwrite and kept: "
          "rename it back to {} or remove it",
          entry.path().string(), out.string());
    }
  }
}

TempOutputDir::TempOutputDir(const fs::path& out) : path_(sibling(out, kTempInfix, ::getpid())) {
  fs::create_directories(path_);
}

TempOutputDir::~TempOutputDir() {
  if (published_) return;
  std::error_code ec;
  fs::remove_all(path_, ec);
  if (ec) spdlog::warn("{}: cannot remove the temporary output: {}", path_.string(), ec.message());
}

void TempOutputDir::publish(const fs::path& out, bool overwrite) {
  fs::path old;
  if (fs::exists(fs::symlink_status(out))) {
    if (!overwrite) throw std::runtime_error(out.string() + ": exists (use --overwrite)");
    check_replaceable(out);  // again: it may have changed while this run worked
    old = sibling(out, kOldInfix, ::getpid());
    fs::rename(out, old);
  }
  std::error_code ec;
  fs::rename(path_, out, ec);
  if (ec) {
    std::string previous;
    if (!old.empty()) {
      std::error_code back;
      fs::rename(old, out, back);
      previous = back ? "; the previous output is at " + old.string()
                      : "; the previous output is unchanged";
    }
    throw std::runtime_error(fmt::format("cannot rename {} to {}: {}{}", path_.string(),
                                         out.string(), ec.message(), previous));
  }
  published_ = true;
  fsync_path(out.parent_path().string());
  if (!old.empty()) {
    fs::remove_all(old, ec);
    if (ec) {
      spdlog::warn("{}: cannot remove the replaced output: {} (the next run retries)", old.string(),
                   ec.message());
    }
  }
}

}  // namespace nmt::preprocess
