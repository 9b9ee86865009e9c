#include "common/run_layout.h"

#include <fmt/format.h>

#include <filesystem>

#include "common/atomic_file.h"
#include "common/decimal_text.h"

namespace nmt::run_layout {
namespace {

namespace fs = std::filesystem;

constexpr const char* kStepPrefix = "step-";
constexpr const char* kCheckpointSuffix = ".h5";
constexpr const char* kAveragedPrefix = "averaged";
constexpr const char* kSpoolPrefix = "tracker-spool-rank";
constexpr const char* kSpoolSuffix = ".jsonl";

std::string in(const std::string& dir, const std::string& name) {
  return (fs::path(dir) / name).string();
}

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The number between `prefix` and `suffix` that make up `name`.
std::optional<std::int64_t> number_between(const std::string& name, const std::string& prefix,
                                           const std::string& suffix) {
  if (name.size() < prefix.size() + suffix.size() || !starts_with(name, prefix) ||
      !ends_with(name, suffix)) {
    return std::nullopt;
  }
  return parse_decimal(name.substr(prefix.size(), name.size() - prefix.size() - suffix.size()));
}

}  // namespace

std::string config_path(const std::string& run_dir) {
  return in(run_dir, kConfigFile);
}
std::string metrics_path(const std::string& run_dir) {
  return in(run_dir, kMetricsFile);
}
std::string identity_path(const std::string& run_dir) {
  return in(run_dir, kIdentityFile);
}
std::string checkpoints_folder(const std::string& run_dir) {
  return in(run_dir, kCheckpointsFolder);
}

std::string checkpoint_path(const std::string& run_dir, std::int64_t step) {
  return in(checkpoints_folder(run_dir),
            fmt::format("{}{:08}{}", kStepPrefix, step, kCheckpointSuffix));
}

std::string best_checkpoint_path(const std::string& run_dir) {
  return in(checkpoints_folder(run_dir), kBestCheckpointFile);
}

std::string spool_path(const std::string& spool_dir, int rank) {
  return in(spool_dir, fmt::format("{}{}{}", kSpoolPrefix, rank, kSpoolSuffix));
}

std::optional<std::int64_t> checkpoint_step(const std::string& file_name) {
  return number_between(file_name, kStepPrefix, kCheckpointSuffix);
}

bool is_best_checkpoint(const std::string& file_name) {
  return file_name == kBestCheckpointFile;
}

bool is_averaged_checkpoint(const std::string& file_name) {
  return starts_with(file_name, kAveragedPrefix) && ends_with(file_name, kCheckpointSuffix);
}

std::optional<std::int64_t> spool_rank(const std::string& file_name) {
  return number_between(file_name, kSpoolPrefix, kSpoolSuffix);
}

std::optional<long> temporary_writer(const std::string& file_name) {
  const auto temporary = parse_atomic_temporary(file_name);
  if (!temporary) return std::nullopt;
  const std::string& target = temporary->target;
  const bool run_file = checkpoint_step(target) || is_best_checkpoint(target) ||
                        target == kConfigFile || target == kIdentityFile || target == kMetricsFile;
  if (!run_file) return std::nullopt;
  return temporary->pid;
}

std::string run_dir_of_checkpoint(const std::string& checkpoint) {
  fs::path folder = fs::path(checkpoint).parent_path();
  if (folder.empty()) folder = ".";
  if (folder.filename() == kCheckpointsFolder) return folder.parent_path().string();
  std::error_code error;
  const bool beside_train = !fs::exists(folder / kIdentityFile, error) &&
                            fs::exists(folder / "train" / kIdentityFile, error);
  return (beside_train ? folder / "train" : folder).string();
}

}  // namespace nmt::run_layout
