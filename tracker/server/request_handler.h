#pragma once
// The daemon's request handler: the routes of tracker/api/routes.h from Request values to Response
// values, the wire types of tracker/api/wire_types.h in and out, the token check (bearer header or
// cookie), validation that names the offending field, and the mapping of store errors to statuses.
// Paths outside /api/ go to the dashboard. It knows nothing of sockets (the HTTP server owns them).

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tracker/api/http_types.h"
#include "tracker/api/limits.h"
#include "tracker/api/routes.h"
#include "tracker/server/backup_route.h"
#include "tracker/server/json_body.h"
#include "tracker/server/token_gate.h"
#include "tracker/store/run_store.h"

namespace nmt::tracker {

// Limits on what one request may cost the daemon (tracker/API.md, "Limits and fairness").
struct HandlerOptions {
  handler::JsonLimits json;  // nesting depth and element count of request bodies
  api::WriteLimits writes;   // lengths of the texts written, metric keys and params per run
  // Metric series with more points are downsampled to this many (and say so); from 1 to
  // kMaxResponsePoints.
  std::int64_t max_response_points = 10'000;
  // An answer of that many points is about 830 MB; the bound also keeps the series batch's share
  // (kSeriesPointsFactor x this) far from overflow.
  static constexpr std::int64_t kMaxResponsePoints = 10'000'000;
  // The dashboard's login cookie is marked Secure (sent over HTTPS only): set when the daemon
  // serves TLS, which the handler cannot see.
  bool secure_cookie = false;

  // Throws std::invalid_argument naming the first bad field.
  void validate() const;
};

class RequestHandler {
 public:
  // `store` must outlive the handler. An empty `token` turns authentication off; otherwise every
  // route but /api/health needs the token, as `Authorization: Bearer <token>` or as the cookie
  // nmt_tracker_token (which `GET /?token=<token>` sets, for the dashboard). `reader`, when given,
  // is a second connection to the same database file (WAL lets it read while `store` writes) that
  // answers the GET routes under a lock of its own: a slow read (a long series to downsample) then
  // holds back neither ingest nor the other writes.
  RequestHandler(RunStore& store, std::string token, HandlerOptions options = {},
                 RunStore* reader = nullptr);

  // Safe to call from several threads: each store connection is used by one thread at a time
  // (SQLite has one writer anyway). Never throws: every failure becomes an error response
  // (400/401/404/405/409/500, and GET /api/backup's 501/503); a 500 is logged with the request and
  // its cause. Paths outside /api/ are the dashboard's files (tracker/dashboard/dashboard.h).
  Response handle(const Request& request);

  // What can be decided from the request line and headers alone (the body is empty here): the
  // 401 refusal when the token is missing or wrong (an HTML page for a dashboard path), and
  // whether the request carries the token (always, without one; /api/health needs none but proves
  // nothing). The server calls it before reading a body, so an unauthenticated client never has
  // one buffered. Thread-safe.
  HeaderCheck check_header(const Request& request) const;

  // The store's RunStore::mark_silent_attempts, under the write lock: the daemon calls it on a
  // timer. Throws what the store throws.
  std::vector<SilentAttempt> mark_silent_attempts(double silence_s);

 private:
  Response route(const Request& request);
  Response route_api(const Request& request, const api::RouteMatch& match);
  Response page(const Request& request);

  Response health();
  Response create_run(const Request& request);
  Response list_runs(const Request& request);
  Response get_run(std::int64_t run_id);
  Response set_deleted(std::int64_t run_id, bool deleted);
  Response set_status(std::int64_t run_id, const Request& request);
  Response heartbeat(std::int64_t run_id, const Request& request);
  Response ingest_metrics(std::int64_t run_id, const Request& request);
  Response metric_series(std::int64_t run_id, const Request& request);
  Response log_eval(std::int64_t run_id, const Request& request);
  Response log_artifact(std::int64_t run_id, const Request& request);
  Response artifact_content(std::int64_t run_id, const std::string& artifact);
  Response list_sweeps();
  Response sweep_table(const std::string& sweep);

  // Runs `work` on the store under the lock; parsing and JSON output stay outside it.
  template <typename Work>
  auto with_store(Work&& work) {
    std::lock_guard<std::mutex> lock(mutex_);
    return work(store_);
  }
  // The same for reads: on the reader connection when there is one.
  template <typename Work>
  auto with_reader(Work&& work) {
    if (reader_ == nullptr) return with_store(std::forward<Work>(work));
    std::lock_guard<std::mutex> lock(reader_mutex_);
    return work(*reader_);
  }

  // The request's body as a T (tracker/api/wire_json.h); 400 naming the field otherwise.
  template <typename T>
  T parse_body(const Request& request) const;

  RunStore& store_;
  RunStore* reader_;
  TokenGate gate_;
  HandlerOptions options_;
  int schema_version_;  // read once: /api/health needs no store lock
  BackupRoute backup_;  // GET /api/backup: on a connection of its own, under neither lock
  std::mutex mutex_, reader_mutex_;
};

}  // namespace nmt::tracker
