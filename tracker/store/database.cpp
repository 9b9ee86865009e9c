#include "tracker/store/database.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "tracker/store/schema.h"

namespace nmt::tracker {
namespace {

// The database holds every run's config and host names: owner only. SQLite gives the -wal and
// -shm files the database file's mode, so creating that one 0600 (before SQLite does, with the
// umask's 0644) covers all three. An existing file keeps its mode; a readable one is reported.
void create_private(const std::string& path) {
  if (!is_plain_file(path)) return;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0) {
    ::close(fd);
    return;
  }
  struct stat info {};
  if (errno == EEXIST && ::stat(path.c_str(), &info) == 0 && (info.st_mode & 0077) != 0) {
    spdlog::warn("tracker database {} is accessible to other users (mode {:o}); chmod 600 it", path,
                 info.st_mode & 0777);
  }
  // Any other failure (a missing directory...) is left for SQLite to report with the path.
}

// The kind of network file system `path` lies on, or nullptr for a local one.
const char* network_file_system(const std::string& path) {
  struct statfs info {};
  if (::statfs(path.c_str(), &info) != 0) return nullptr;
  switch (static_cast<unsigned long>(info.f_type)) {
    case 0x6969:  // NFS_SUPER_MAGIC
      return "NFS";
    case 0x0BD00BD0:  // LL_SUPER_MAGIC
      return "Lustre";
    case 0xFF534D42:  // CIFS_MAGIC_NUMBER
    case 0xFE534D42:  // SMB2_MAGIC_NUMBER
      return "SMB";
    case 0x47504653:  // GPFS_SUPER_MAGIC
      return "GPFS";
    case 0x65735546:  // FUSE_SUPER_MAGIC (sshfs and the like)
      return "FUSE";
    default:
      return nullptr;
  }
}

// The process holding a lock that conflicts with a write lock on [start, start + length) of
// `file`, as "pid N (name)"; empty when none does (or the file cannot be opened).
std::string lock_holder(const std::string& file, off_t start, off_t length) {
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  struct flock probe {};
  probe.l_type = F_WRLCK;
  probe.l_whence = SEEK_SET;
  probe.l_start = start;
  probe.l_len = length;
  const bool asked = ::fcntl(fd, F_GETLK, &probe) == 0;
  ::close(fd);
  if (!asked || probe.l_type == F_UNLCK) return {};
  std::string name;
  std::ifstream comm("/proc/" + std::to_string(probe.l_pid) + "/comm");
  std::getline(comm, name);
  return "pid " + std::to_string(probe.l_pid) + (name.empty() ? "" : " (" + name + ")");
}

// Who holds the database: SQLite's locks are POSIX record locks on the bytes from 2^30 of the
// database file (a writer, or a closing connection's checkpoint) and on bytes 120-128 of its -shm
// file (a connection in WAL mode).
std::string describe_holder(const std::string& path) {
  std::string holder = lock_holder(path, off_t{1} << 30, 512);
  if (holder.empty()) holder = lock_holder(path + "-shm", 120, 9);
  return holder.empty() ? "another process (it has let go since)" : holder;
}

SQLite::Database open_or_explain(const std::string& path) {
  create_private(path);
  try {
    // NOMUTEX: a connection is used by one thread at a time (RequestHandler holds a lock per
    // connection), so SQLite's own per-call mutex only costs time on every read. The busy timeout
    // is in force from the first statement: a daemon that is closing the file (its last
    // checkpoint) is waited for.
    return SQLite::Database(path,
                            SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE | SQLite::OPEN_NOMUTEX,
                            Database::kBusyTimeoutMs);
  } catch (const SQLite::Exception& e) {
    throw std::runtime_error(path + ": cannot open the tracker database: " + e.what());
  }
}

}  // namespace

Database::Database(const std::string& path) : path_(path), db_(open_or_explain(path)) {
  try {
    // WAL must be set before the first write transaction; it persists in the file.
    db_.exec("PRAGMA journal_mode = WAL");
    // NORMAL is durable in WAL mode against process crashes (SIGKILL), which is what we promise.
    db_.exec("PRAGMA synchronous = NORMAL");
    db_.exec("PRAGMA foreign_keys = ON");
    migrate(db_, path_);
  } catch (const SQLite::Exception& e) {
    std::string reason = e.what();
    const int code = e.getErrorCode() & 0xff;  // the primary code of an extended one
    if (code == SQLITE_BUSY || code == SQLITE_LOCKED) {
      reason += " after waiting " + std::to_string(kBusyTimeoutMs / 1000) + " s; held by " +
                describe_holder(path);
    }
    throw std::runtime_error(path + ": cannot prepare the tracker database: " + reason);
  }
}

int Database::schema_version() {
  return db_.execAndGet("PRAGMA user_version").getInt();
}

std::string Database::journal_mode() {
  return db_.execAndGet("PRAGMA journal_mode").getString();
}

bool is_plain_file(const std::string& path) {
  return !path.empty() && path != ":memory:" && path.rfind("file:", 0) != 0;
}

OwnerLockSpec daemon_lock_spec(const std::string& path) {
  create_private(path);
  if (const char* kind = network_file_system(path)) {
    spdlog::warn(
        "tracker database {} is on {}: SQLite's WAL needs memory shared between its connections "
        "and the one-daemon lock needs the server's locks; keep the database on a local disk of "
        "the machine the daemon runs on",
        path, kind);
  }
  OwnerLockSpec spec;
  spec.anchor = path;
  spec.record = path + ".holder";
  spec.what = "tracker database " + path;
  spec.tool = "nmt-trackerd";
  spec.advice =
      "one daemon serves a database; point clients at it, or stop it before starting another";
  spec.wait_for_stopping = std::chrono::minutes(1);
  spec.grace = std::chrono::seconds(1);
  spec.record_mode = 0600;
  return spec;
}

}  // namespace nmt::tracker
