#pragma once
// What training links to report to nmt-trackerd (tracker/API.md). The lesson of MLflow and W&B:
// tracking must never block or crash training. So log_* only append to a bounded in-memory queue;
// one background thread batches metric points, sends them, and when the daemon is unreachable
// writes them to a spool file in the run directory (tracker/client/spool.h) that is replayed once
// the daemon answers again. Every metric batch carries a per-rank sequence number, so a replayed
// batch the daemon already stored is ignored rather than stored twice.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>

// Tools that include this header (apps/nmt_evaluate.cpp) have long had nlohmann's JSON through it.
#include <nlohmann/json.hpp>

#include "tracker/api/run_rules.h"
#include "tracker/api/wire_types.h"

namespace nmt::tracker {

class HttpClient;
class Spool;
struct SpoolEntry;

// The first retry delay, doubled after each failure up to ClientOptions::max_retry_backoff.
inline constexpr std::chrono::milliseconds kInitialRetryBackoff{100};

struct ClientOptions {
  std::string url;                      // the daemon, http://host:port or https://host:port
  std::string token;                    // bearer token; empty when the daemon needs none
  std::string ca_file;                  // https: PEM CAs to verify it; empty: the system's
  std::string spool_path;               // spool file, in the run directory; one per rank
  int rank = 0;                         // MPI rank, stored with each point
  std::size_t batch_size = 500;         // metric points per request
  std::size_t queue_capacity = 100000;  // points held in memory; beyond it points are dropped
  std::chrono::milliseconds flush_interval{1000};      // longest a point waits in the queue
  std::chrono::milliseconds max_retry_backoff{30000};  // cap of the doubling retry delay
  std::chrono::milliseconds request_timeout{5000};     // connect, write, read of one request
  std::chrono::milliseconds start_run_timeout{2000};   // the synchronous start_run only
  std::chrono::milliseconds close_timeout{5000};       // the destructor's flush
  // Between heartbeats of the run's attempt (POST .../heartbeat, sent by the background thread
  // whatever the trainer is doing; never spooled: only a live process may send one); 0: none.
  // The trainer's rank 0 sends them; a client recording into a run it does not run (nmt-evaluate)
  // must not, or it would keep a dead run's attempt from being found crashed.
  std::chrono::milliseconds heartbeat_interval{0};

  // Throws std::invalid_argument naming the field at fault.
  void validate() const;
};

// POST /api/runs (tracker/api/wire_types.h). Unset optionals, and empty strings, are left out of
// the request. `uid` identifies the run across processes: keep it in the run directory and send
// it again, with a higher `attempt` (1 for the run's first process, then 1 more for each requeue
// or restart), to resume the run; a registration whose attempt is not above the stored one is a
// replay and changes nothing. No uid: start_run generates one for this registration alone, so
// that its retries after a lost answer are idempotent, but the next process registers a new run.
// `name` is a label only: runs are never found again by name.
using RunInfo = api::RunRegistration;
// POST /api/runs/{id}/evals and /artifacts. Non-finite figures are left out (JSON cannot carry
// them).
using EvalRecord = api::EvalRecord;
using ArtifactRecord = api::ArtifactRecord;

// What a trainer reports of its run (tracker/api/run_rules.h): all but kCrashed, which the daemon
// gives an attempt that never reported its end.
using RunStatus = api::RunStatus;

struct ClientStats {
  std::int64_t delivered_points = 0;  // acknowledged by the daemon
  std::int64_t dropped_points = 0;    // queue full, or a value JSON cannot carry (NaN, inf)
  std::size_t queued = 0;             // points and requests not handled yet
  std::size_t spooled_requests = 0;   // in the spool file, waiting for the daemon
  std::size_t spooled_points = 0;
};

class TrackerClient {
 public:
  // Starts the background thread and loads what an earlier client left in the spool. Throws
  // std::invalid_argument on bad options; never contacts the daemon.
  explicit TrackerClient(ClientOptions options);
  // Flushes for at most close_timeout (all of it when the daemon is down), then logs how many
  // points stay in the spool.
  ~TrackerClient();
  TrackerClient(const TrackerClient&) = delete;
  TrackerClient& operator=(const TrackerClient&) = delete;

  // Registers (or, by RunInfo::uid and attempt, resumes) the run, waiting at most
  // start_run_timeout. Throws std::invalid_argument on a malformed uid or an attempt below 1. When
  // the daemon does not answer, logs a warning (an error naming the URL when it refused the token
  // or its TLS certificate did not verify), returns nullopt and keeps trying in the background;
  // everything logged meanwhile is spooled and sent once the run has an id. Call once per client
  // (rank 0); other ranks call attach_run with the id rank 0 broadcasts.
  std::optional<std::int64_t> start_run(const RunInfo& info);
  void attach_run(std::int64_t run_id);
  std::optional<std::int64_t> run_id() const;

  // Non-blocking: each appends to the queue and returns. The signature matches
  // nmt::MetricsSink::log.
  void log_metric(const std::string& key, std::int64_t step, double value);
  // A point logged earlier (a record sent again), at its own time in Unix seconds.
  void log_metric(const std::string& key, std::int64_t step, double value, double unix_time);
  void log_eval(const EvalRecord& eval);
  void log_artifact(const ArtifactRecord& artifact);
  void set_status(RunStatus status);

  // Waits until everything logged before the call is acknowledged by the daemon, retrying while
  // it does not answer, for at most `timeout`. Returns true when nothing is left to deliver.
  bool flush(std::chrono::milliseconds timeout);

  ClientStats stats() const;
  const ClientOptions& options() const { return options_; }

 private:
  struct Point {
    std::string key;
    std::int64_t step;
    double value;
    double time;
  };
  struct Request {
    std::string kind;  // as in SpoolEntry
    std::string body;
  };
  using Item = std::variant<Point, Request>;

  enum class Outcome { kAcknowledged, kRetry, kRejected };

  void enqueue(Request request);
  void worker_loop();
  void run_round(std::deque<Item> items, bool forced, bool stopping);
  std::vector<SpoolEntry> make_entries(std::deque<Item>& items);
  void deliver(std::vector<SpoolEntry> entries, bool stopping);
  void replay();
  Outcome try_register(const std::string& body, HttpClient& http, bool on_worker,
                       std::string& reason, bool& needs_fixing);
  Outcome send(const SpoolEntry& entry, std::int64_t current_run);
  // `answer`: the body when acknowledged, else why not. `needs_fixing`: a retry is due, but only
  // a change of token, CA file or certificate will make it succeed.
  Outcome exchange(HttpClient& http, const std::string& method, const std::string& path,
                   const std::string& body, std::string& answer, bool& needs_fixing);
  void heartbeat(std::int64_t run);
  bool under_pressure() const;
  void note_failure(const std::string& reason, bool needs_fixing);
  void note_success();

  const ClientOptions options_;

  // Shared with the callers' threads, guarded by mutex_.
  mutable std::mutex mutex_;
  std::condition_variable wake_;      // the worker: work arrived, flush or stop
  std::condition_variable progress_;  // flush(): a round finished
  std::deque<Item> queue_;
  std::size_t queued_points_ = 0;
  std::optional<std::int64_t> run_id_;
  std::string pending_registration_;     // POST /api/runs body still to send
  std::optional<std::int64_t> attempt_;  // RunInfo::attempt, sent with every status
  bool run_started_ = false;
  std::uint64_t flush_requested_ = 0;
  std::uint64_t flush_completed_ = 0;
  bool round_failed_ = false;  // the worker's last delivery attempt failed
  bool stop_ = false;
  ClientStats stats_;

  // The worker's own.
  std::unique_ptr<HttpClient> http_;
  std::unique_ptr<Spool> spool_;
  std::int64_t next_sequence_ = 0;
  std::chrono::milliseconds backoff_{0};
  std::chrono::steady_clock::time_point next_attempt_{};
  bool last_attempt_failed_ = false;
  std::chrono::steady_clock::time_point next_heartbeat_{};

  std::thread worker_;
};

// The protocol's status words and uids (tracker/api/run_rules.h): a status's word, a new uid, and
// the daemon's own rule for uids.
using api::generate_run_uid;
using api::is_valid_run_uid;
using api::to_string;

}  // namespace nmt::tracker
