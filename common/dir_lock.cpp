#include "common/dir_lock.h"

#include <filesystem>

#include "common/run_layout.h"

namespace nmt {
namespace {

OwnerLockSpec run_dir_spec(const std::string& dir, const std::string& tool) {
  std::filesystem::create_directories(dir);
  OwnerLockSpec spec;
  spec.anchor = dir;
  spec.record = (std::filesystem::path(dir) / run_layout::kLockFile).string();
  spec.what = dir;
  spec.tool = tool;
  spec.advice =
      "one process at a time owns a run directory; wait for it to end, or choose another "
      "directory";
  return spec;
}

}  // namespace

DirectoryLock::DirectoryLock(const std::string& dir, const std::string& tool)
    : lock_(run_dir_spec(dir, tool)) {}

}  // namespace nmt
