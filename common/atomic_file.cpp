#include "common/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "common/checked_paths.h"

namespace nmt {
namespace {

[[noreturn]] void fail(const std::string& path, const char* what) {
  throw std::runtime_error(path + ": " + what + ": " + std::strerror(errno));
}

}  // namespace

void fsync_path(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) fail(path, "cannot open for fsync");
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) fail(path, "fsync failed");
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  write_file_atomically(path, contents.data(), contents.size());
}

void write_file_atomically(const std::string& given, const void* data, std::size_t size) {
  const auto* bytes = static_cast<const char*>(data);
  const std::string path = output_file_path(given);
  const std::filesystem::path target(path);
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) fail(temp, "cannot create");
  std::size_t written = 0;
  while (written < size) {
    const ssize_t n = ::write(fd, bytes + written, size - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int cause = errno;  // close and unlink must not replace it
      ::close(fd);
      ::unlink(temp.c_str());
      errno = cause;
      fail(temp, "write failed");
    }
    written += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const int cause = errno;
    ::unlink(temp.c_str());
    errno = cause;
    fail(temp, "fsync/close failed");
  }
  if (::rename(temp.c_str(), path.c_str()) != 0) {
    const int cause = errno;
    ::unlink(temp.c_str());
    errno = cause;
    fail(path, "rename failed");
  }
  const auto parent = target.has_parent_path() ? target.parent_path().string() : std::string(".");
  fsync_path(parent);
}

}  // namespace nmt
