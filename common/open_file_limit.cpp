#include "common/open_file_limit.h"

#include <sys/resource.h>

#include <limits>

namespace nmt {
namespace {

// The most descriptors Linux lets a process hold unless fs.nr_open was raised.
constexpr rlim_t kNrOpen = rlim_t{1} << 20;

std::uint64_t as_count(rlim_t limit) {
  return limit == RLIM_INFINITY ? std::numeric_limits<std::uint64_t>::max()
                                : static_cast<std::uint64_t>(limit);
}

}  // namespace

OpenFileLimit raise_open_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return {};
  OpenFileLimit result{as_count(limit.rlim_cur), as_count(limit.rlim_cur),
                       as_count(limit.rlim_max)};
  const rlim_t target = limit.rlim_max == RLIM_INFINITY ? kNrOpen : limit.rlim_max;
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < target) {
    const rlimit raised{target, limit.rlim_max};
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) result.soft = as_count(target);
  }
  return result;
}

}  // namespace nmt
