#include "common/append_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace nmt {
namespace {

[[noreturn]] void fail(const std::string& what, int cause) {
  throw std::runtime_error(fmt::format("{}: {}", what, std::strerror(cause)));
}

}  // namespace

AppendFile::AppendFile(std::string path) : path_(std::move(path)) {
  fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(path_ + ": cannot open for appending", errno);
}

AppendFile::~AppendFile() {
  if (fd_ >= 0) ::close(fd_);
}

void AppendFile::append(const std::string& data) {
  if (data.empty()) return;
  struct stat before {};
  if (::fstat(fd_, &before) != 0) fail(path_ + ": cannot stat", errno);
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int cause = errno;
      // Cut the partial record off. Truncating needs no new blocks, so it works on a full disk.
      if (done > 0 && ::ftruncate(fd_, before.st_size) != 0) {
        fail(fmt::format("{}: cannot append {} bytes ({}), nor cut the {} written back", path_,
                         data.size(), std::strerror(cause), done),
             errno);
      }
      fail(fmt::format("{}: cannot append {} bytes", path_, data.size()), cause);
    }
    done += static_cast<std::size_t>(n);
  }
}

void AppendFile::sync() {
  if (::fdatasync(fd_) != 0) fail(path_ + ": fdatasync failed", errno);
}

}  // namespace nmt
