#include "common/dir_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <thread>

#include "common/json_fields.h"
#include "common/run_layout.h"

namespace nmt {
namespace {

std::string host_name() {
  char host[256] = {0};
  return ::gethostname(host, sizeof host - 1) == 0 ? std::string(host) : std::string("?");
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

// The holder as its lock file records it, in words. The holder writes the record right after
// taking the lock, so a record still missing is waited for, up to a second.
std::string describe_holder(int fd) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    std::string text(4096, '\0');
    const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
    text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    const auto holder = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (holder.is_object()) {
      try {
        const Fields fields(holder);
        return fmt::format(
            "{} (pid {} on host {}, since {})", fields.optional_text("tool").value_or("?"),
            fields.optional_integer("pid").value_or(0), fields.optional_text("host").value_or("?"),
            fields.optional_text("since").value_or("?"));
      } catch (const FieldError& e) {
        return fmt::format("a process whose record is malformed ({})", e.what());
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return "a process that has not recorded itself";
}

}  // namespace

DirectoryLock::DirectoryLock(const std::string& dir, const std::string& tool)
    : path_((std::filesystem::path(dir) / run_layout::kLockFile).string()) {
  std::filesystem::create_directories(dir);
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw std::runtime_error(
        fmt::format("{}: cannot open the lock file: {}", path_, std::strerror(errno)));
  }
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int cause = errno;
    if (cause == EWOULDBLOCK) {
      const std::string holder = describe_holder(fd_);
      ::close(fd_);
      fd_ = -1;
      throw DirectoryBusy(fmt::format(
          "{} is in use by {}: one process at a time owns a run directory (lock {}); wait for it "
          "to end, or choose another directory",
          dir, holder, path_));
    }
    spdlog::warn(
        "{}: the file system refuses locks ({}): nothing keeps a second process from writing "
        "into {} at the same time",
        path_, std::strerror(cause), dir);
    return;
  }
  held_ = true;
  const std::string holder =
      nlohmann::json{
          {"tool", tool}, {"pid", ::getpid()}, {"host", host_name()}, {"since", utc_now()}}
          .dump() +
      "\n";
  if (::ftruncate(fd_, 0) != 0 ||
      ::pwrite(fd_, holder.data(), holder.size(), 0) != static_cast<ssize_t>(holder.size())) {
    const int cause = errno;
    ::close(fd_);
    fd_ = -1;
    throw std::runtime_error(
        fmt::format("{}: cannot record the lock's holder: {}", path_, std::strerror(cause)));
  }
}

DirectoryLock::~DirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock
}

}  // namespace nmt
