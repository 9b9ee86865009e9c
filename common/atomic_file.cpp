#include "common/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <stdexcept>

#include "common/checked_paths.h"
#include "common/decimal_text.h"

namespace nmt {
namespace {

[[noreturn]] void fail(const std::string& path, const char* what) {
  throw std::runtime_error(path + ": " + what + ": " + std::strerror(errno));
}

constexpr const char* kTemporaryInfix = ".tmp.";

}  // namespace

std::string atomic_temporary_path(const std::string& path, long pid) {
  return path + kTemporaryInfix + std::to_string(pid);
}

std::optional<AtomicTemporary> parse_atomic_temporary(const std::string& file_name) {
  const auto at = file_name.rfind(kTemporaryInfix);
  if (at == std::string::npos || at == 0) return std::nullopt;
  const auto pid = parse_decimal(file_name.substr(at + std::strlen(kTemporaryInfix)));
  if (!pid || *pid > std::numeric_limits<pid_t>::max()) return std::nullopt;
  return AtomicTemporary{file_name.substr(0, at), static_cast<long>(*pid)};
}

void fsync_path(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) fail(path, "cannot open for fsync");
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) fail(path, "fsync failed");
}

AtomicFileWriter::AtomicFileWriter(const std::string& target)
    : target_(output_file_path(target)), temporary_(atomic_temporary_path(target_, ::getpid())) {
  fd_ = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) fail(temporary_, "cannot create");
}

AtomicFileWriter::~AtomicFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temporary_.c_str());
}

void AtomicFileWriter::reserve(std::uint64_t size) {
  int rc = 0;
  do {
    rc = ::fallocate(fd_, 0, 0, static_cast<off_t>(size));
  } while (rc != 0 && errno == EINTR);
  if (rc != 0 && errno != EOPNOTSUPP && errno != ENOSYS) {
    fail(temporary_, ("cannot reserve " + std::to_string(size) + " bytes").c_str());
  }
}

void AtomicFileWriter::write_at(const void* data, std::size_t size, std::uint64_t offset) {
  const auto* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::pwrite(fd_, bytes, size, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(temporary_, "write failed");
    bytes += n;
    offset += static_cast<std::uint64_t>(n);
    size -= static_cast<std::size_t>(n);
  }
  end_ = std::max(end_, offset);
}

void AtomicFileWriter::append(const void* data, std::size_t size) {
  write_at(data, size, end_);
}

void AtomicFileWriter::commit(std::optional<std::uint64_t> size) {
  if (size && ::ftruncate(fd_, static_cast<off_t>(*size)) != 0) {
    fail(temporary_, "cannot set the size");
  }
  if (::fsync(fd_) != 0) fail(temporary_, "fsync failed");
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail(temporary_, "close failed");
  if (::rename(temporary_.c_str(), target_.c_str()) != 0) fail(target_, "rename failed");
  committed_ = true;
  const std::filesystem::path parent = std::filesystem::path(target_).parent_path();
  fsync_path(parent.empty() ? std::string(".") : parent.string());
}

void write_file_atomically(const std::string& path, const std::string& contents) {
  write_file_atomically(path, contents.data(), contents.size());
}

void write_file_atomically(const std::string& path, const void* data, std::size_t size) {
  AtomicFileWriter out(path);
  out.append(data, size);
  out.commit();
}

}  // namespace nmt
