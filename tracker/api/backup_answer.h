#pragma once
// GET /api/backup (tracker/API.md, "Backups"): its answer is not JSON but the database file itself,
// a consistent snapshot; what a client checks the copy against travels in its header fields,
// named here for the daemon and the client alike.

#include <cstdint>

namespace nmt::tracker::api {

// The media type of a SQLite database file (IANA).
inline constexpr char kBackupContentType[] = "application/vnd.sqlite3";
// The snapshot's schema version (PRAGMA user_version): the copy must read the same.
inline constexpr char kBackupSchemaVersionField[] = "X-Schema-Version";

// What the answer's header says of the snapshot that follows it.
struct BackupInfo {
  std::uint64_t size = 0;  // Content-Length: the bytes of the file
  int schema_version = 0;
};

}  // namespace nmt::tracker::api
