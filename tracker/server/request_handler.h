#pragma once
// The daemon's request handler: routes of tracker/API.md from Request values to Response values,
// JSON in and out, bearer-token check, validation that names the offending field, and the mapping
// of store errors to statuses. It knows nothing of sockets (the HTTP server owns those).

#include <mutex>
#include <string>

#include "tracker/server/http_types.h"
#include "tracker/store/run_store.h"

namespace nmt::tracker {

class RequestHandler {
 public:
  // `store` must outlive the handler. An empty `token` turns authentication off; otherwise every
  // route but /api/health needs `Authorization: Bearer <token>`.
  RequestHandler(RunStore& store, std::string token);

  // Safe to call from several threads: store access is serialized inside (SQLite has one writer
  // anyway). Never throws: every failure becomes an error response (400/401/404/405/409/500).
  Response handle(const Request& request);

 private:
  Response route(const Request& request);
  Response route_run(const Request& request, const std::string& rest);
  bool authorized(const std::string& authorization) const;

  Response health();
  Response create_run(const Request& request);
  Response list_runs(const Request& request);
  Response get_run(std::int64_t run_id);
  Response set_status(std::int64_t run_id, const Request& request);
  Response ingest_metrics(std::int64_t run_id, const Request& request);
  Response metric_series(std::int64_t run_id, const Request& request);
  Response log_eval(std::int64_t run_id, const Request& request);
  Response log_artifact(std::int64_t run_id, const Request& request);
  Response sweep_table(const std::string& sweep);

  // Runs `work` on the store under the lock; parsing and JSON output stay outside it.
  template <typename Work>
  auto with_store(Work&& work) {
    std::lock_guard<std::mutex> lock(mutex_);
    return work(store_);
  }

  RunStore& store_;
  std::string token_;
  std::mutex mutex_;
};

}  // namespace nmt::tracker
