#pragma once
// A process's memory as /proc/PID/status reports it, and the reset of this process's peak: what the
// memory benchmarks and tests measure.

#include <dlfcn.h>
#include <malloc.h>
#include <sys/types.h>

#include <fstream>
#include <string>

namespace nmt {

// A field of /proc/PID/status in kB ("VmRSS", "VmHWM", "RssAnon", "RssFile"); pid 0: this
// process. -1 when the field or the process is not there.
inline long proc_status_kb(const std::string& field, pid_t pid = 0) {
  std::ifstream in(pid == 0 ? std::string("/proc/self/status")
                            : "/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

// Gives freed memory back to the system (tcmalloc's when the process links it, then glibc's) and
// resets VmHWM to VmRSS, so that the next peak counts only what is allocated from here. False when
// the kernel refuses the reset.
inline bool reset_peak_memory() {
  using Release = void (*)();
  if (auto release =
          reinterpret_cast<Release>(dlsym(RTLD_DEFAULT, "MallocExtension_ReleaseFreeMemory"))) {
    release();
  }
  malloc_trim(0);
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";  // VmHWM := VmRSS
  clear.close();
  return clear.good();
}

}  // namespace nmt
