#include "tracker/server/backup_route.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <stdexcept>
#include <utility>

#include "tracker/api/backup_answer.h"
#include "tracker/server/http_error.h"
#include "tracker/store/database_snapshot.h"

namespace nmt::tracker {
namespace {

using handler::HttpError;

// The snapshot as the server sees a body file; letting it go frees the file and the route.
class SnapshotBody : public BodyFile {
 public:
  SnapshotBody(const std::string& database_path, std::shared_ptr<std::atomic<bool>> busy)
      : busy_(std::move(busy)), snapshot_(database_path) {}
  ~SnapshotBody() override { busy_->store(false); }
  int descriptor() const override { return snapshot_.descriptor(); }
  std::uint64_t size() const override { return snapshot_.size(); }
  int schema_version() const { return snapshot_.schema_version(); }

 private:
  std::shared_ptr<std::atomic<bool>> busy_;  // before the snapshot: a failed one frees the route
  DatabaseSnapshot snapshot_;
};

// Frees the route when the snapshot throws (the body's destructor never runs then).
struct BusyUnlessKept {
  std::atomic<bool>& busy;
  bool kept = false;
  ~BusyUnlessKept() {
    if (!kept) busy.store(false);
  }
};

}  // namespace

BackupRoute::BackupRoute(std::string database_path)
    : database_path_(std::move(database_path)), busy_(std::make_shared<std::atomic<bool>>(false)) {}

Response BackupRoute::answer() {
  if (busy_->exchange(true)) {
    throw HttpError(503, "another backup is being made or sent; try again when it is done");
  }
  BusyUnlessKept release{*busy_};
  const auto start = std::chrono::steady_clock::now();
  std::shared_ptr<SnapshotBody> body;
  try {
    body = std::make_shared<SnapshotBody>(database_path_, busy_);
  } catch (const std::invalid_argument& e) {
    throw HttpError(501, e.what());
  }
  release.kept = true;
  spdlog::info("backup: snapshot of {} made ({} bytes, schema version {}) in {:.2f} s; sending it",
               database_path_, body->size(), body->schema_version(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  Response response{200, "", api::kBackupContentType};
  response.headers.emplace_back(api::kBackupSchemaVersionField,
                                std::to_string(body->schema_version()));
  response.body_file = std::move(body);
  return response;
}

}  // namespace nmt::tracker
