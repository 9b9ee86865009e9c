#include "common/run_layout.h"

#include <fmt/format.h>

#include <ctime>
#include <filesystem>
#include <stdexcept>

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
constexpr const char* kToolSpoolPrefix = "tracker-spool-";
// A tool spool's time, as "20261207T120000.123Z": '#' a digit.
constexpr const char* kToolSpoolTimeForm = "########T######.###Z";

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

bool is_tool_name(const std::string& text) {
  return !text.empty() &&
         text.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos;
}

bool matches_time_form(const std::string& text) {
  const std::string form = kToolSpoolTimeForm;
  if (text.size() != form.size()) return false;
  for (std::size_t i = 0; i < form.size(); ++i) {
    const bool digit = text[i] >= '0' && text[i] <= '9';
    if (form[i] == '#' ? !digit : text[i] != form[i]) return false;
  }
  return true;
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

std::string tool_spool_path(const std::string& run_dir, const std::string& tool,
                            std::int64_t unix_ms, long pid) {
  if (!is_tool_name(tool)) {
    throw std::invalid_argument("tool spool: the tool '" + tool +
                                "' is not lowercase letters, digits and dashes");
  }
  const std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  return in(run_dir,
            fmt::format("{}{:04}{:02}{:02}T{:02}{:02}{:02}.{:03}Z-{}-{}{}", kToolSpoolPrefix,
                        utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min,
                        utc.tm_sec, unix_ms % 1000, tool, pid, kSpoolSuffix));
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

bool is_tool_spool(const std::string& file_name) {
  const std::string prefix = kToolSpoolPrefix, suffix = kSpoolSuffix;
  if (file_name.size() < prefix.size() + suffix.size() || !starts_with(file_name, prefix) ||
      !ends_with(file_name, suffix)) {
    return false;
  }
  // TIME-TOOL-PID
  const std::string middle =
      file_name.substr(prefix.size(), file_name.size() - prefix.size() - suffix.size());
  const std::size_t time_size = std::string(kToolSpoolTimeForm).size();
  const std::size_t last_dash = middle.rfind('-');
  if (middle.size() < time_size + 4 || !matches_time_form(middle.substr(0, time_size)) ||
      middle[time_size] != '-' || last_dash <= time_size + 1) {
    return false;
  }
  return is_tool_name(middle.substr(time_size + 1, last_dash - time_size - 1)) &&
         parse_decimal(middle.substr(last_dash + 1)).has_value();
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
