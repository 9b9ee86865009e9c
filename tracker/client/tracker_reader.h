#pragma once
// The typed read client of nmt-trackerd (tracker/API.md) for tools: listings, runs, series,
// sweeps, and the few writes people make by hand (a status, a soft delete). Every answer is parsed
// into the protocol's wire types (tracker/api/wire_types.h); every error names the daemon's URL
// and the request, with the daemon's HTTP status and message when it answered.
//
// Where the daemon is, in this order (find_daemon): an explicit URL, a port file nmt-trackerd
// wrote (host 127.0.0.1), the environment variable NMT_TRACKER_URL. The token: an explicit
// token file, else the file named by NMT_TRACKER_TOKEN_FILE, else none.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracker/api/run_query.h"
#include "tracker/api/wire_types.h"

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

// No answer at all: no daemon there (or none found), or the connection failed.
class TrackerUnreachable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Where to find the daemon and its token.
struct DaemonAddress {
  std::string url;    // http://host:port
  std::string token;  // empty: none
};

// What a tool was told (flags), and how to read its environment: `getenv` is std::getenv in a
// tool's main and a fake one in tests. Throws TrackerUnreachable when a port file is given but
// missing (the daemon is not running), std::invalid_argument when nothing says where the daemon
// is, std::runtime_error when a token file cannot be read.
struct DaemonFlags {
  std::string url;         // --url
  std::string port_file;   // --port-file
  std::string token_file;  // --token-file
};
using GetEnv = std::function<const char*(const char*)>;
DaemonAddress find_daemon(const DaemonFlags& flags, const GetEnv& getenv);

class TrackerReader {
 public:
  // Contacts nothing yet. Throws std::invalid_argument on a malformed URL.
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
                                  std::optional<std::int64_t> rank = std::nullopt);
  std::vector<api::SweepSummary> sweeps();
  api::SweepTable sweep_table(const std::string& sweep);
  // status: running, finished, failed, killed or preempted (the run's current attempt).
  api::StatusAnswer set_status(std::int64_t run_id, const std::string& status);
  api::DeleteAnswer delete_run(std::int64_t run_id);
  api::DeleteAnswer restore_run(std::int64_t run_id);
  // An evaluation recorded by hand or by a script (the trainer's client sends its own).
  api::EvalCreated log_eval(std::int64_t run_id, const api::EvalRecord& record);
  // A file of the run (a report, a checkpoint) recorded by a tool.
  api::ArtifactCreated log_artifact(std::int64_t run_id, const api::ArtifactRecord& record);

  const std::string& url() const { return url_; }

 private:
  // The answer's JSON parsed as T; TrackerError / TrackerUnreachable otherwise.
  template <class T>
  T call(const std::string& method, const std::string& target, const std::string& body = "");

  std::string url_;
  std::unique_ptr<HttpClient> http_;
};

}  // namespace nmt::tracker
