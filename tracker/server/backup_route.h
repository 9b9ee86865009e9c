#pragma once
// GET /api/backup (tracker/API.md, "Backups"): a consistent snapshot of the daemon's database
// (tracker/store/database_snapshot.h) answered as a file body that the server streams a piece at a
// time, so a database of gigabytes never sits in memory. One backup at a time: the snapshot costs
// the database's size on disk until it is sent, so a second request meanwhile is refused (503)
// rather than doubling that.

#include <atomic>
#include <memory>
#include <string>

#include "tracker/api/http_types.h"

namespace nmt::tracker {

class BackupRoute {
 public:
  explicit BackupRoute(std::string database_path);

  // The snapshot as a Response with a body file; throws handler::HttpError 503 while another
  // backup is made or sent, 501 for a database that is not a file, std::runtime_error (a 500)
  // naming the temporary and the cause when the snapshot cannot be made. Blocks the calling handler
  // thread, and it alone, while the snapshot is made.
  Response answer();

 private:
  std::string database_path_;
  // Set from the snapshot's start until its body file is let go; shared with that body file, which
  // may outlive this route in a session.
  std::shared_ptr<std::atomic<bool>> busy_;
};

}  // namespace nmt::tracker
