#include "trainer/checkpoint/checkpoint_files.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "common/run_layout.h"

namespace nmt::checkpoint {

namespace fs = std::filesystem;

std::vector<std::string> list_checkpoints(const std::string& run_dir) {
  std::vector<std::string> found;
  const fs::path dir = run_layout::checkpoints_folder(run_dir);
  if (!fs::exists(dir)) return found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (run_layout::checkpoint_step(entry.path().filename().string())) {
      found.push_back(entry.path().string());
    }
  }
  std::sort(found.begin(), found.end());  // zero-padded steps sort by name
  return found;
}

void refuse_fresh_start_over_checkpoints(const std::string& run_dir, bool resume) {
  if (resume || list_checkpoints(run_dir).empty()) return;
  throw std::runtime_error(run_dir +
                           " already holds checkpoints: pass --resume to continue it, or choose "
                           "another --run-dir");
}

void prune_checkpoints(const std::string& run_dir, std::int64_t keep) {
  auto all = list_checkpoints(run_dir);
  for (std::size_t i = 0; i + static_cast<std::size_t>(keep) < all.size(); ++i) fs::remove(all[i]);
  remove_stale_temporaries(run_dir);
}

std::vector<std::string> remove_stale_temporaries(const std::string& run_dir) {
  const long self = static_cast<long>(::getpid());
  std::vector<std::string> removed;
  for (const fs::path& dir :
       {fs::path(run_dir), fs::path(run_layout::checkpoints_folder(run_dir))}) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      const auto writer = run_layout::temporary_writer(entry.path().filename().string());
      if (!writer || *writer == self) continue;
      const auto bytes =
          fs::is_regular_file(entry.path(), ec) ? fs::file_size(entry.path(), ec) : 0;
      if (fs::remove(entry.path(), ec)) {
        spdlog::info("removed {} ({} bytes), left by process {} that ended before renaming it",
                     entry.path().string(), bytes, *writer);
        removed.push_back(entry.path().string());
      } else if (ec) {
        spdlog::warn("cannot remove the stale temporary {}: {}", entry.path().string(),
                     ec.message());
      }
    }
  }
  return removed;
}

}  // namespace nmt::checkpoint
