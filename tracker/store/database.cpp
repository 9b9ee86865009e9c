#include "tracker/store/database.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "tracker/store/schema.h"

namespace nmt::tracker {
namespace {

// The database holds every run's config and host names: owner only. SQLite gives the -wal and
// -shm files the database file's mode, so creating that one 0600 (before SQLite does, with the
// umask's 0644) covers all three. An existing file keeps its mode; a readable one is reported.
void create_private(const std::string& path) {
  if (path.empty() || path == ":memory:" || path.rfind("file:", 0) == 0) {
    return;
  }
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

SQLite::Database open_or_explain(const std::string& path) {
  create_private(path);
  try {
    // NOMUTEX: a connection is used by one thread at a time (RequestHandler holds a lock per
    // connection), so SQLite's own per-call mutex only costs time on every read.
    return SQLite::Database(path,
                            SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE | SQLite::OPEN_NOMUTEX);
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
    db_.setBusyTimeout(5000);
    migrate(db_, path_);
  } catch (const SQLite::Exception& e) {
    throw std::runtime_error(path + ": cannot prepare the tracker database: " + e.what());
  }
}

int Database::schema_version() {
  return db_.execAndGet("PRAGMA user_version").getInt();
}

std::string Database::journal_mode() {
  return db_.execAndGet("PRAGMA journal_mode").getString();
}

}  // namespace nmt::tracker
