#include "tracker/store/database_snapshot.h"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "common/atomic_file.h"
#include "tracker/store/database.h"

namespace nmt::tracker {
namespace {

namespace fs = std::filesystem;

// The name a snapshot's temporary is made from: DB-backup, so that its temporaries read
// DB-backup.tmp.PID.
std::string snapshot_stem(const std::string& database_path) {
  return database_path + "-backup";
}

// Temporaries of snapshots whose daemon died while making them: the process named in the file
// name is gone. A live process's (this one's included) is left alone.
void remove_abandoned(const std::string& database_path) {
  const fs::path database(database_path);
  const fs::path folder = database.has_parent_path() ? database.parent_path() : fs::path(".");
  const std::string stem = fs::path(snapshot_stem(database_path)).filename().string();
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const auto temporary = parse_atomic_temporary(entry.path().filename().string());
    if (!temporary || temporary->target != stem) continue;
    if (::kill(static_cast<pid_t>(temporary->pid), 0) == 0 || errno != ESRCH) continue;
    std::error_code removed;
    if (fs::remove(entry.path(), removed)) {
      spdlog::info("removed {}: a snapshot left by process {}, which ended while making it",
                   entry.path().string(), temporary->pid);
    }
  }
}

// Removes the temporary's name when the constructor ends, whichever way: once the snapshot is open
// its descriptor keeps the file, and a failure leaves nothing behind.
class NameGuard {
 public:
  explicit NameGuard(std::string path) : path_(std::move(path)) {}
  ~NameGuard() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }
  NameGuard(const NameGuard&) = delete;
  NameGuard& operator=(const NameGuard&) = delete;

 private:
  std::string path_;
};

// The user_version of a database file: 4 bytes, big-endian, at offset 60 of its header
// (https://www.sqlite.org/fileformat.html#user_version_number).
int header_user_version(int fd, const std::string& path) {
  unsigned char bytes[4] = {};
  if (::pread(fd, bytes, sizeof bytes, 60) != static_cast<ssize_t>(sizeof bytes)) {
    throw std::runtime_error(path + ": the snapshot has no database header");
  }
  return static_cast<int>((std::uint32_t{bytes[0]} << 24) | (std::uint32_t{bytes[1]} << 16) |
                          (std::uint32_t{bytes[2]} << 8) | std::uint32_t{bytes[3]});
}

void vacuum_into(const std::string& database_path, const std::string& temporary) {
  try {
    SQLite::Database source(database_path, SQLite::OPEN_READONLY | SQLite::OPEN_NOMUTEX,
                            Database::kBusyTimeoutMs);
    SQLite::Statement vacuum(source, "VACUUM INTO ?");
    vacuum.bind(1, temporary);
    vacuum.exec();
  } catch (const SQLite::Exception& e) {
    std::string cause = e.what();
    if ((e.getErrorCode() & 0xff) == SQLITE_FULL) {
      std::error_code ec;
      const auto size = fs::file_size(database_path, ec);
      cause += fmt::format(
          " (the snapshot needs about the database's size, {} bytes, free in its folder)",
          ec ? 0 : size);
    }
    throw std::runtime_error(
        fmt::format("{}: cannot make the snapshot of {}: {}", temporary, database_path, cause));
  }
}

}  // namespace

std::string DatabaseSnapshot::temporary_path(const std::string& database_path, long pid) {
  return atomic_temporary_path(snapshot_stem(database_path), pid);
}

DatabaseSnapshot::DatabaseSnapshot(const std::string& database_path) {
  if (!is_plain_file(database_path)) {
    throw std::invalid_argument("the database '" + database_path +
                                "' is not a file name: there is no file to back up");
  }
  remove_abandoned(database_path);
  const std::string temporary = temporary_path(database_path, ::getpid());
  ::unlink(temporary.c_str());
  // VACUUM INTO writes into an empty file: created here, owner-only.
  const int created = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (created < 0) {
    throw std::runtime_error(fmt::format("{}: cannot create the snapshot beside the database: {}",
                                         temporary, std::strerror(errno)));
  }
  ::close(created);
  NameGuard name(temporary);
  vacuum_into(database_path, temporary);
  fd_ = ::open(temporary.c_str(), O_RDONLY | O_CLOEXEC);
  struct stat info {};
  if (fd_ < 0 || ::fstat(fd_, &info) != 0) {
    const int error = errno;
    if (fd_ >= 0) ::close(fd_);
    throw std::runtime_error(
        fmt::format("{}: cannot open the snapshot made: {}", temporary, std::strerror(error)));
  }
  size_ = static_cast<std::uint64_t>(info.st_size);
  try {
    schema_version_ = header_user_version(fd_, temporary);
  } catch (...) {
    ::close(fd_);
    throw;
  }
}

DatabaseSnapshot::~DatabaseSnapshot() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace nmt::tracker
