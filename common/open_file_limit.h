#pragma once
// This process's limit on open files (RLIMIT_NOFILE), raised for a process that holds a descriptor
// per client or per simulated client: a server of a thousand connections, or a benchmark of them.
// Shells and service managers often start processes with a soft limit of 1024 under a much higher
// hard limit that an unprivileged process may raise its soft limit to.

#include <cstdint>

namespace nmt {

struct OpenFileLimit {
  std::uint64_t before = 0;  // the soft limit found
  std::uint64_t soft = 0;    // the soft limit now: the open files this process may hold
  std::uint64_t hard = 0;    // the ceiling of the soft limit (RLIM_INFINITY as UINT64_MAX)
  bool raised() const { return soft > before; }
};

// Raises the soft limit to the hard limit (to 1,048,576, the kernel's usual fs.nr_open, when the
// hard limit is unlimited); a refusal leaves it where it was. Never lowers it.
OpenFileLimit raise_open_file_limit();

}  // namespace nmt
