#pragma once
// Which malloc this process runs on: the LibTorch tools link tcmalloc (cmake/ProjectTargets.cmake,
// nmt_use_tcmalloc), and nmt-sysinfo and nmt-train report what the process actually got, since a
// build without it, or an LD_PRELOAD, changes the speed of every training step.

#include <string>

namespace nmt::runtime {

// "tcmalloc" when malloc resolves to gperftools' tcmalloc, "jemalloc" to jemalloc, else "glibc".
std::string malloc_implementation();

}  // namespace nmt::runtime
