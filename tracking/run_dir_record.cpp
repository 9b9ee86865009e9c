#include "tracking/run_dir_record.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/checked_paths.h"
#include "common/run_layout.h"
#include "tracker/api/limits.h"
#include "tracking/run_identity.h"
#include "tracking/run_tracking.h"
#include "trainer/config/train_config.h"

namespace nmt::tracking {

namespace api = tracker::api;

namespace {

namespace fs = std::filesystem;

// A run directory's own text files: a config and reports of kilobytes; 16 MiB is far past any.
std::string read_text(const fs::path& path, std::uint64_t max_bytes = 16u << 20) {
  return read_regular_file(path.string(), max_bytes, "the file");
}

std::string absolute_path(const fs::path& path) {
  return fs::absolute(path).lexically_normal().string();
}

// "PATH: what it is" for an entry that cannot be read as a file.
std::string unreadable(const fs::path& path, const std::string& why) {
  return fmt::format("{}: {}", path.string(), why);
}

// The regular files in `dir` (links to them included), sorted; a folder that is not there has
// none. An entry whose kind cannot be told (a loop of links, no permission) and a folder that
// cannot be listed are added to `problems`; a link to nothing is no file and no problem.
std::vector<fs::path> sorted_entries(const fs::path& dir, std::vector<std::string>& problems) {
  std::vector<fs::path> entries;
  std::error_code error;
  fs::directory_iterator it(dir, error);
  if (error) {
    if (error != std::errc::no_such_file_or_directory) {
      problems.push_back(unreadable(dir, "cannot be listed: " + error.message()));
    }
    return entries;
  }
  for (const fs::directory_iterator end; it != end; it.increment(error)) {
    const bool regular = it->is_regular_file(error);
    if (error && error != std::errc::no_such_file_or_directory) {
      problems.push_back(unreadable(it->path(), describe_path(it->path().string())));
    } else if (regular) {
      entries.push_back(it->path());
    }
    error.clear();
  }
  if (error) problems.push_back(unreadable(dir, "cannot be listed: " + error.message()));
  std::sort(entries.begin(), entries.end());
  return entries;
}

// A report's text, when it fits the daemon's default limit (a larger one goes by its path).
std::optional<std::string> report_text(const fs::path& path) {
  std::error_code error;
  const auto size = fs::file_size(path, error);
  const std::size_t limit = api::WriteLimits{}.max_content_bytes;
  if (!error && size > limit) {
    spdlog::warn("{}: {} bytes, over the daemon's default content limit; recorded by its path",
                 path.string(), size);
    return std::nullopt;
  }
  std::string text = read_text(path, limit);
  if (text.empty()) return std::nullopt;
  return text;
}

}  // namespace

RunDirRecord read_run_dir(const std::string& dir) {
  RunDirRecord record;
  record.dir = dir;
  const auto identity = read_run_identity(dir);
  if (!identity) {
    throw std::runtime_error(fmt::format(
        "{}: no {} there: not a training run directory (nmt-train writes it at the start)",
        run_layout::identity_path(dir), run_layout::kIdentityFile));
  }
  const fs::path config_path = run_layout::config_path(dir);
  if (!fs::is_regular_file(config_path)) {
    throw std::runtime_error(
        fmt::format("{}: missing: the run's resolved config, which nmt-train writes at the start",
                    config_path.string()));
  }
  const std::string yaml = read_text(config_path);
  const RunConfig config = load_run_config(config_path.string());
  // What nmt-train registers (tracking/run_tracking.h), with run.json's hosts and provenance.
  record.registration =
      run_registration(config, yaml, dir, *identity, config.model.expected_parameter_count());
  record.max_steps = config.train.max_steps;

  std::vector<std::pair<std::int64_t, std::string>> spools;
  for (const auto& path : sorted_entries(dir, record.problems)) {
    const std::string name = path.filename().string();
    if (auto rank = run_layout::spool_rank(name)) {
      spools.emplace_back(*rank, path.string());
    } else if (run_layout::is_tool_spool(name)) {
      record.tool_spool_files.push_back(path.string());  // sorted by name: by time
    }
  }
  std::sort(spools.begin(), spools.end());
  for (auto& [rank, path] : spools) record.spool_files.push_back(path);

  for (const auto& path : sorted_entries(run_layout::checkpoints_folder(dir), record.problems)) {
    if (auto n = run_layout::checkpoint_step(path.filename().string())) {
      record.last_checkpoint_step = std::max(record.last_checkpoint_step.value_or(*n), *n);
    }
  }
  return record;
}

std::vector<api::ArtifactRecord> run_dir_artifacts(const std::string& dir,
                                                   std::vector<std::string>& problems) {
  std::vector<api::ArtifactRecord> found;
  for (const auto& path : sorted_entries(run_layout::checkpoints_folder(dir), problems)) {
    const std::string name = path.filename().string();
    if (auto n = run_layout::checkpoint_step(name)) {
      found.push_back({"checkpoint", absolute_path(path), *n, std::nullopt});
    } else if (run_layout::is_best_checkpoint(name)) {
      found.push_back({"best", absolute_path(path), std::nullopt, std::nullopt});
    }
  }
  for (const auto& path : sorted_entries(dir, problems)) {
    if (run_layout::is_averaged_checkpoint(path.filename().string())) {
      found.push_back({"averaged", absolute_path(path), std::nullopt, std::nullopt});
    }
  }
  for (const fs::path& folder : {fs::path(dir), fs::path(dir) / run_layout::kAnalysisFolder}) {
    for (const auto& [file, kind] : {std::pair{run_layout::kAnalysisReportFile, "analysis"},
                                     std::pair{run_layout::kAnalysisChartFile, "analysis_chart"}}) {
      const fs::path path = folder / file;
      if (nothing_at(path.string())) continue;
      if (path_kind(path.string()) != PathKind::kRegular) {
        problems.push_back(unreadable(path, describe_path(path.string())));
        continue;
      }
      std::optional<std::string> text;
      try {
        text = report_text(path);
      } catch (const std::runtime_error& e) {
        problems.push_back(e.what());
        continue;
      }
      // An empty report says nothing.
      if (!text && std::string(file) == run_layout::kAnalysisReportFile) continue;
      api::ArtifactRecord record{kind, absolute_path(path), std::nullopt, std::nullopt};
      record.content = std::move(text);
      found.push_back(std::move(record));
    }
  }
  std::stable_sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.kind != b.kind ? a.kind < b.kind : a.path < b.path;
  });
  return found;
}

std::string status_from_run_dir(const RunDirRecord& record) {
  const bool reached_end =
      record.last_checkpoint_step && *record.last_checkpoint_step >= record.max_steps;
  return reached_end ? "finished" : "crashed";
}

}  // namespace nmt::tracking
