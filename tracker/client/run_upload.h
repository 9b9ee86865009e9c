#pragma once
// The synchronous writes of a run recorded offline (nmt-tracker sync): its registration, metric
// batches, and a spooled request's body sent as is to its route (tracker/API.md). Unlike the
// trainer's client (tracker_client.h) it blocks and reports every failure, since a person waits
// for the answer: a daemon that does not answer is retried a few times, then TrackerUnreachable;
// a refusal is TrackerError (tracker_reader.h) with the daemon's status and message.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "tracker/api/wire_types.h"
#include "tracker/client/daemon_address.h"

namespace nmt::tracker {

class HttpClient;
struct SpoolEntry;

class RunUploader {
 public:
  // Contacts nothing yet. Throws std::invalid_argument on a malformed URL or an unusable CA file.
  RunUploader(const DaemonAddress& address, std::chrono::milliseconds timeout);
  ~RunUploader();
  RunUploader(const RunUploader&) = delete;
  RunUploader& operator=(const RunUploader&) = delete;

  api::RunCreated register_run(const api::RunRegistration& info);
  api::IngestAnswer send_metrics(std::int64_t run_id, const api::MetricBatch& batch);
  api::StatusAnswer set_status(std::int64_t run_id, const api::StatusUpdate& update);
  // `entry`'s body to the route of its kind (metrics, evals, artifacts, status) of run `run_id`;
  // the answer's JSON.
  nlohmann::json send_spooled(std::int64_t run_id, const SpoolEntry& entry);

 private:
  // Every write here is idempotent (tracker/API.md), so a lost answer or a 5xx is retried.
  nlohmann::json call(const std::string& method, const std::string& target,
                      const std::string& body);

  std::string url_;
  std::unique_ptr<HttpClient> http_;
};

}  // namespace nmt::tracker
