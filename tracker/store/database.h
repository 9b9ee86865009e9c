#pragma once
// The tracker's SQLite database, owned by the daemon alone. Opening it sets WAL mode (readers never
// block the single writer), a busy timeout, foreign keys, and brings the schema to the current
// version through the migrations in schema.cpp, each in its own transaction. A connection is for
// one thread at a time (opened without SQLite's per-connection mutex): callers serialize, as
// RequestHandler does with a lock per connection.

#include <SQLiteCpp/Database.h>

#include <string>

#include "common/owner_lock.h"

namespace nmt::tracker {

// Whether `path` names a database file of its own, as opposed to one in memory (":memory:", "") or
// a "file:" URI, which SQLite resolves itself.
bool is_plain_file(const std::string& path);

// What makes a daemon the one owner of the database file `path` (common/owner_lock.h): the lock
// is on the file itself, the holder is named in `path`.holder, and a daemon started while the
// holder is stopping waits for it (up to a minute). Creates the file (0600) when missing, and
// warns when it lies on a network file system, where neither SQLite's WAL nor the lock holds.
OwnerLockSpec daemon_lock_spec(const std::string& path);

class Database {
 public:
  // How long a statement waits for a lock another connection holds (another daemon closing the
  // file, this daemon's other connection) before it fails with SQLITE_BUSY.
  static constexpr int kBusyTimeoutMs = 10'000;

  // Opens or creates `path`. Throws std::runtime_error naming the file when it cannot be opened,
  // is not a SQLite database, was written by a newer version of this program, or is held by
  // another process for longer than the busy timeout (naming its pid and name).
  explicit Database(const std::string& path);

  SQLite::Database& sqlite() { return db_; }
  const std::string& path() const { return path_; }
  int schema_version();
  std::string journal_mode();

 private:
  std::string path_;
  SQLite::Database db_;
};

}  // namespace nmt::tracker
