#include "common/thread_pools.h"

#include <link.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace nmt {
namespace {

// Whether a shared library whose file name starts with "libgomp" is loaded into this process.
bool libgomp_loaded() {
  const auto visit = [](dl_phdr_info* info, std::size_t, void*) -> int {
    const char* name = info->dlpi_name;
    if (name == nullptr) return 0;
    const char* base = std::strrchr(name, '/');
    base = base == nullptr ? name : base + 1;
    return std::strncmp(base, "libgomp", 7) == 0 ? 1 : 0;
  };
  return dl_iterate_phdr(visit, nullptr) != 0;
}

}  // namespace

void settle_openmp_waiting(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) return;
  if (!libgomp_loaded()) return;
  // Set before the exec, so the new image finds it and returns at the first check.
  if (setenv("GOMP_SPINCOUNT", kOpenMpSpinCount, 1) != 0) return;
  // The binary's own path, not /proc/self/exe: the process keeps its name (comm, ps, pgrep).
  char path[PATH_MAX];
  const ssize_t length = readlink("/proc/self/exe", path, sizeof path - 1);
  if (length > 0) {
    path[length] = '\0';
    execv(path, argv);
  }
  std::fprintf(stderr,
               "warning: could not restart with GOMP_SPINCOUNT=%s (%s): idle OpenMP "
               "threads spin as long as libgomp's default\n",
               kOpenMpSpinCount, std::strerror(errno));
}

}  // namespace nmt
