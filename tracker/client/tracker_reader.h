#pragma once
// The typed read client of nmt-trackerd (tracker/API.md) for tools: listings, runs, series,
// sweeps, and the few writes people make by hand (a status, a soft delete). Every answer is parsed
// into the protocol's wire types (tracker/api/wire_types.h); every error names the daemon's URL
// and the request, with the daemon's HTTP status and message when it answered.
//
// Where the daemon is, its token and its CA file: tracker/client/daemon_address.h (find_daemon:
// --url, else --port-file, else NMT_TRACKER_URL; and so on).

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracker/api/backup_answer.h"
#include "tracker/api/run_query.h"
#include "tracker/api/series_query.h"
#include "tracker/api/wire_types.h"
#include "tracker/client/daemon_address.h"

namespace nmt::tracker {

class HttpClient;

// The daemon answered with an error status (404 for an unknown run, 400 for a bad query...).
class TrackerError : public std::runtime_error {
 public:
  TrackerError(const std::string& message, int status, std::optional<std::string> field)
      : std::runtime_error(message), status_(status), field_(std::move(field)) {}
  int status() const { return status_; }
  // The field or query parameter the daemon named, if any.
  const std::optional<std::string>& field() const { return field_; }

 private:
  int status_;
  std::optional<std::string> field_;
};

class TrackerReader {
 public:
  // Contacts nothing yet. Throws std::invalid_argument on a malformed URL or an unusable CA file.
  explicit TrackerReader(DaemonAddress address,
                         std::chrono::milliseconds timeout = std::chrono::seconds(30));
  ~TrackerReader();
  TrackerReader(const TrackerReader&) = delete;
  TrackerReader& operator=(const TrackerReader&) = delete;

  api::Health health();
  std::vector<api::RunSummary> list_runs(const api::RunQuery& query = {});
  api::RunDetail get_run(std::int64_t run_id);
  // The runs (not deleted) with exactly this name; names are labels, so there may be several.
  std::vector<api::RunSummary> find_runs_by_name(const std::string& name);
  api::MetricSeries metric_series(std::int64_t run_id, const std::string& key,
                                  std::optional<std::int64_t> max_points = std::nullopt,
                                  std::optional<std::int64_t> rank = std::nullopt,
                                  std::optional<std::int64_t> after_step = std::nullopt);
  // Every stored point of a series, exactly (no downsampling), read a page at a time
  // (`after_step`).
  std::vector<api::SeriesPoint> all_points(std::int64_t run_id, const std::string& key);
  // Many series in one request (GET /api/series), by run as asked, then by key; more runs than
  // the daemon answers at once (api::kMaxSeriesRuns) in further requests. max_points of the
  // answer: the lowest bound a request's series were read with.
  api::SeriesList series_of_runs(const api::SeriesQuery& query);
  std::vector<api::SweepSummary> sweeps();
  api::SweepTable sweep_table(const std::string& sweep);
  // status: running, finished, failed, killed, preempted or crashed (the run's current attempt).
  api::StatusAnswer set_status(std::int64_t run_id, const std::string& status);
  api::DeleteAnswer delete_run(std::int64_t run_id);
  api::DeleteAnswer restore_run(std::int64_t run_id);
  // An evaluation recorded by hand or by a script (the trainer's client sends its own).
  api::EvalCreated log_eval(std::int64_t run_id, const api::EvalRecord& record);
  // A file of the run (a report, a checkpoint) recorded by a tool.
  api::ArtifactCreated log_artifact(std::int64_t run_id, const api::ArtifactRecord& record);

  // GET /api/backup: a consistent snapshot of the daemon's database, its size and schema version
  // to `begin`, then its bytes to `write` as they arrive (never held whole). The daemon may take
  // `snapshot_wait` to make the snapshot before the first byte. Returns what `begin` got. Throws
  // TrackerError when the daemon refuses (its status and message) or the answer breaks off,
  // TrackerUnreachable when no answer comes, and what `begin` or `write` throw.
  api::BackupInfo backup(const std::function<void(const api::BackupInfo&)>& begin,
                         const std::function<void(const char*, std::size_t)>& write,
                         std::chrono::milliseconds snapshot_wait);

  const std::string& url() const { return url_; }

 private:
  // The answer's JSON parsed as T; TrackerError / TrackerUnreachable otherwise.
  template <class T>
  T call(const std::string& method, const std::string& target, const std::string& body = "");

  std::string url_;
  std::unique_ptr<HttpClient> http_;
};

}  // namespace nmt::tracker
