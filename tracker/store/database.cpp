#include "tracker/store/database.h"

#include <stdexcept>

#include "tracker/store/schema.h"

namespace nmt::tracker {
namespace {

SQLite::Database open_or_explain(const std::string& path) {
  try {
    return SQLite::Database(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
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
