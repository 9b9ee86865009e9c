#include "trainer/checkpoint/checkpoint_files.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <stdexcept>
#include <system_error>

namespace nmt::checkpoint {

namespace fs = std::filesystem;

std::string checkpoint_path(const std::string& run_dir, std::int64_t step) {
  return (fs::path(run_dir) / "checkpoints" / fmt::format("step-{:08}.h5", step)).string();
}

std::vector<std::string> list_checkpoints(const std::string& run_dir) {
  std::vector<std::string> found;
  const fs::path dir = fs::path(run_dir) / "checkpoints";
  if (!fs::exists(dir)) return found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("step-", 0) == 0 && entry.path().extension() == ".h5") {
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
  // The temporaries of the trainer's atomic writes: NAME.tmp.PID.
  static const std::regex kTemporary(
      R"((step-[0-9]+\.h5|best\.h5|config\.yaml|run\.json|metrics\.jsonl)\.tmp\.([0-9]+))");
  const std::string self = std::to_string(::getpid());
  std::vector<std::string> removed;
  for (const fs::path& dir : {fs::path(run_dir), fs::path(run_dir) / "checkpoints"}) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      std::smatch match;
      const std::string name = entry.path().filename().string();
      if (!std::regex_match(name, match, kTemporary) || match[2] == self) continue;
      const auto bytes =
          fs::is_regular_file(entry.path(), ec) ? fs::file_size(entry.path(), ec) : 0;
      if (fs::remove(entry.path(), ec)) {
        spdlog::info("removed {} ({} bytes), left by process {} that ended before renaming it",
                     entry.path().string(), bytes, match[2].str());
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
