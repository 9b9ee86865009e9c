#pragma once
// A consistent copy of the tracker database, made while the daemon keeps writing to it: VACUUM INTO
// on a read-only connection of its own reads one WAL snapshot (a single read transaction), so the
// copy holds every transaction committed before it began and nothing of any later one, and neither
// the writer nor the daemon's reader connection waits for it. The copy is a plain database file
// (rollback journal, no -wal to go with it) with the source's schema version.
//
// The copy is written beside the database as DB-backup.tmp.PID (mode 0600: it holds what the
// database holds), opened, and its name removed at once: the file lives as long as the snapshot
// object and no longer, whatever happens to whoever reads it. One left by a daemon that died while
// making it (its pid no longer running) is removed before the next snapshot is made.

#include <cstdint>
#include <string>

namespace nmt::tracker {

class DatabaseSnapshot {
 public:
  // Copies the database file `database_path`. Throws std::invalid_argument for a database that
  // is not a file (":memory:", a "file:" URI), std::runtime_error naming the temporary and the
  // cause when the copy cannot be made (disk full, an unwritable folder, a busy timeout).
  explicit DatabaseSnapshot(const std::string& database_path);
  ~DatabaseSnapshot();
  DatabaseSnapshot(const DatabaseSnapshot&) = delete;
  DatabaseSnapshot& operator=(const DatabaseSnapshot&) = delete;

  int descriptor() const { return fd_; }  // open for reading; the file has no name
  std::uint64_t size() const { return size_; }
  int schema_version() const { return schema_version_; }

  // Where the snapshot of `database_path` is made by process `pid`.
  static std::string temporary_path(const std::string& database_path, long pid);

 private:
  int fd_ = -1;
  std::uint64_t size_ = 0;
  int schema_version_ = 0;
};

}  // namespace nmt::tracker
