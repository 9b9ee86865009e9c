#include "common/checked_paths.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace nmt {
namespace {

PathKind kind_of(mode_t mode) {
  if (S_ISREG(mode)) return PathKind::kRegular;
  if (S_ISDIR(mode)) return PathKind::kDirectory;
  if (S_ISCHR(mode)) return PathKind::kCharacterDevice;
  if (S_ISBLK(mode)) return PathKind::kBlockDevice;
  if (S_ISFIFO(mode)) return PathKind::kPipe;
  if (S_ISSOCK(mode)) return PathKind::kSocket;
  return PathKind::kOther;
}

const char* words(PathKind kind) {
  switch (kind) {
    case PathKind::kMissing:
      return "missing";
    case PathKind::kRegular:
      return "a regular file";
    case PathKind::kDirectory:
      return "a directory";
    case PathKind::kCharacterDevice:
      return "a character device";
    case PathKind::kBlockDevice:
      return "a block device";
    case PathKind::kPipe:
      return "a pipe";
    case PathKind::kSocket:
      return "a socket";
    case PathKind::kOther:
      return "not a regular file";
    case PathKind::kDanglingLink:
      return "a link to nothing";
    case PathKind::kLinkLoop:
      return "a loop of symbolic links";
    case PathKind::kUnreadable:
      break;
  }
  return "unreadable";
}

// path_kind, and errno of the failed stat for kUnreadable.
PathKind path_kind_and_cause(const std::string& path, int& cause) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) return kind_of(info.st_mode);
  cause = errno;
  if (::lstat(path.c_str(), &info) == 0 && S_ISLNK(info.st_mode)) {
    return cause == ELOOP ? PathKind::kLinkLoop : PathKind::kDanglingLink;
  }
  return cause == ENOENT ? PathKind::kMissing : PathKind::kUnreadable;
}

// Closes a descriptor on every way out.
struct Descriptor {
  int fd = -1;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

}  // namespace

PathKind path_kind(const std::string& path) {
  int cause = 0;
  return path_kind_and_cause(path, cause);
}

std::string describe_path(const std::string& path) {
  int cause = 0;
  const PathKind kind = path_kind_and_cause(path, cause);
  return kind == PathKind::kUnreadable ? std::strerror(cause) : words(kind);
}

bool nothing_at(const std::string& path) {
  const PathKind kind = path_kind(path);
  return kind == PathKind::kMissing || kind == PathKind::kDanglingLink;
}

std::string read_regular_file(const std::string& path, std::uint64_t max_bytes,
                              const std::string& what) {
  // O_NONBLOCK: opening a pipe with no writer must not wait; a regular file ignores it.
  Descriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
  if (file.fd < 0) {
    const int cause = errno;
    const std::string kind = describe_path(path);
    throw std::runtime_error(
        fmt::format("{}: cannot open {}: {}", path, what,
                    kind.rfind("a l", 0) == 0 ? kind : std::string(std::strerror(cause))));
  }
  struct stat info {};
  if (::fstat(file.fd, &info) != 0) {
    throw std::runtime_error(
        fmt::format("{}: {} cannot be read: {}", path, what, std::strerror(errno)));
  }
  if (!S_ISREG(info.st_mode)) {
    throw std::runtime_error(
        fmt::format("{}: {} is {}, not a regular file", path, what, words(kind_of(info.st_mode))));
  }
  const auto size = static_cast<std::uint64_t>(info.st_size);
  if (size > max_bytes) {
    throw std::runtime_error(
        fmt::format("{}: {} is {} bytes, over the limit of {} bytes", path, what, size, max_bytes));
  }
  // Read to the end, but never past the bound: a file that grows while read is cut there.
  std::string text(static_cast<std::size_t>(size), '\0');
  std::size_t have = 0;
  for (;;) {
    if (have == text.size()) {
      if (have >= max_bytes + 1) break;
      text.resize(static_cast<std::size_t>(std::min<std::uint64_t>(max_bytes + 1, have + 4096)));
    }
    const ssize_t n = ::read(file.fd, text.data() + have, text.size() - have);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      throw std::runtime_error(
          fmt::format("{}: {} cannot be read: {}", path, what, std::strerror(errno)));
    }
    if (n == 0) break;
    have += static_cast<std::size_t>(n);
  }
  if (have > max_bytes) {
    throw std::runtime_error(
        fmt::format("{}: {} grew past the limit of {} bytes while read", path, what, max_bytes));
  }
  text.resize(have);
  return text;
}

std::string output_file_path(const std::string& path) {
  struct stat link {};
  if (::lstat(path.c_str(), &link) != 0) {
    if (errno == ENOENT) return path;
    throw std::runtime_error(
        fmt::format("{}: the output cannot be checked: {}", path, std::strerror(errno)));
  }
  if (S_ISREG(link.st_mode)) return path;
  const PathKind kind = path_kind(path);
  const bool is_link = S_ISLNK(link.st_mode);
  if (is_link && kind == PathKind::kRegular) return std::filesystem::canonical(path).string();
  if (is_link && kind == PathKind::kDanglingLink) {
    // The file the link names is created; a chain of links ends at a path with nothing there.
    std::filesystem::path target = std::filesystem::read_symlink(path);
    if (target.is_relative()) target = std::filesystem::path(path).parent_path() / target;
    return output_file_path(target.string());
  }
  throw std::runtime_error(fmt::format(
      "{}: the output exists and is {}{}, not a regular file: nothing was written (an output is "
      "a new file or a regular one, replaced whole; to write to the terminal or a pipe, leave the "
      "output out where the tool offers that)",
      path, is_link && kind != PathKind::kLinkLoop ? "a link to " : "", describe_path(path)));
}

}  // namespace nmt
