#pragma once
// The tracker's operations over its SQLite database: runs (created, or resumed by uid), params,
// attempts, metric batches (idempotent by run, rank and sequence), evals, artifacts, and the
// queries behind the HTTP API in tracker/API.md. Every write is one transaction and returns only
// after commit. Not thread-safe: one RunStore per connection, callers serialize (the request
// handler does).

#include <SQLiteCpp/Statement.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracker/store/database.h"

namespace nmt::tracker {

// An unknown run or sweep; the handler answers 404. Bad input is std::invalid_argument (400).
class NotFound : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What POST /api/runs carries. Optional fields left empty stay NULL (or, on resume, unchanged).
// A run is found again only by its uid, never by its name (tracker/API.md, issue 16).
struct RunSpec {
  std::string experiment;                 // created on first use
  std::string name;                       // a label: two runs may share it
  std::optional<std::string> uid;         // the client's id of the run; see is_valid_uid
  std::int64_t attempt = 1;               // > the stored attempt of `uid` resumes the run
  std::optional<std::string> sweep;       // groups the rows of an ablation table
  std::optional<std::string> row_label;   // e.g. "(A) h=1"
  std::optional<std::int64_t> row_index;  // order of the row in its table
  std::optional<std::string> config;      // the resolved YAML text
  std::optional<std::string> config_hash;
  std::optional<std::string> git_revision;
  std::optional<std::string> host;
  std::optional<std::int64_t> world_size;
  std::optional<std::string> slurm_job_id;
  std::optional<std::string> slurm_array_id;
  nlohmann::json params = nlohmann::json::object();  // flat key -> number, string or bool
};

struct RunHandle {
  std::int64_t run_id = 0;
  std::int64_t attempt = 1;  // the run's current attempt
  bool resumed = false;      // true only when this call started a new attempt of an existing run
};

// A uid given with an experiment or name other than its run's: most likely a run directory copied
// with its uid file. Refused (409) rather than merged.
class Conflict : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct MetricPoint {
  std::string key;
  std::int64_t step = 0;
  double value = 0.0;
  std::optional<double> time;  // seconds since the epoch; the ingest time when absent
};

struct IngestResult {
  std::int64_t stored = 0;  // points written by this call
  bool duplicate = false;   // the (run, rank, sequence) batch was already stored
};

struct EvalRecord {
  std::string split;  // "valid", "test", ...
  std::optional<std::int64_t> step;
  std::optional<std::string> checkpoint;
  std::optional<double> bleu;
  std::optional<double> chrf;
  std::optional<double> perplexity;
  std::optional<std::string> signature;  // the sacreBLEU-style signature
};

struct ArtifactRecord {
  std::string kind;  // "checkpoint", "averaged", ...
  std::string path;
  std::optional<std::int64_t> step;
  std::optional<std::int64_t> averaged_from;  // number of checkpoints averaged
};

// All fields ANDed; params compare numerically when both sides parse as numbers, else as text.
struct RunFilter {
  std::optional<std::string> experiment;
  std::optional<std::string> sweep;
  std::optional<std::string> status;
  std::optional<std::string> uid;
  std::map<std::string, std::string> params;  // key -> value as written in the query
};

class RunStore {
 public:
  // `db` must outlive the store; the store caches prepared statements on its connection.
  explicit RunStore(Database& db);

  int schema_version() { return db_.schema_version(); }

  // No uid, or an unknown one: a new run. A known uid with a higher attempt: that run resumed
  // (attempt, status running, provenance sent, params upserted). A known uid with an attempt not
  // above the stored one: a replayed registration, answered with the run as it is, changing
  // nothing. Throws Conflict when the uid's run has another experiment or name.
  RunHandle create_or_resume_run(const RunSpec& spec);
  // status: see is_valid_status; all but running set ended_at, running clears it. Applies to the
  // run and its current attempt; with `attempt` (an older one) to that attempt's row only, so
  // that a late report of a preempted attempt cannot end the attempt now running.
  void set_status(std::int64_t run_id, const std::string& status,
                  std::optional<std::int64_t> attempt = std::nullopt);
  IngestResult ingest_metrics(std::int64_t run_id, std::int64_t rank, std::int64_t sequence,
                              const std::vector<MetricPoint>& points);
  std::int64_t log_eval(std::int64_t run_id, const EvalRecord& eval);
  std::int64_t log_artifact(std::int64_t run_id, const ArtifactRecord& artifact);

  // JSON shapes as in API.md: list_runs the array of run summaries; get_run, metric_series and
  // sweep_table the full response bodies.
  nlohmann::json list_runs(const RunFilter& filter);
  nlohmann::json get_run(std::int64_t run_id);
  // max_points: at most that many points, one per step bucket with mean value and min/max. The
  // answer's "total_points" counts the stored points and "downsampled" says whether it bucketed.
  nlohmann::json metric_series(std::int64_t run_id, const std::string& key,
                               std::optional<std::int64_t> max_points,
                               std::optional<std::int64_t> rank);
  nlohmann::json sweep_table(const std::string& sweep);

  // running, finished, failed, killed or preempted.
  static bool is_valid_status(const std::string& status);
  // 8 to 64 characters of [A-Za-z0-9_-] (kUidRule, the words of every error about it). The
  // client library has its own copy of the rule, tracker::is_valid_run_uid: it does not link
  // the store.
  static bool is_valid_uid(const std::string& uid);
  static constexpr const char* kUidRule =
      "must be 8 to 64 characters of A-Z, a-z, 0-9, '_' and '-'";

 private:
  std::int64_t experiment_id(const std::string& name, double now);
  RunHandle insert_run(std::int64_t experiment, const RunSpec& spec, double now);
  RunHandle resume_run(std::int64_t run_id, const RunSpec& spec);
  void insert_attempt(std::int64_t run_id, const RunSpec& spec, double now);
  void upsert_params(std::int64_t run_id, const nlohmann::json& params);
  void require_run(std::int64_t run_id);
  nlohmann::json run_params(std::int64_t run_id);
  // All rows of a SELECT whose one parameter is the run id.
  nlohmann::json rows_of_run(const char* select, std::int64_t run_id);
  nlohmann::json metric_keys(std::int64_t run_id);
  nlohmann::json newest_evals(std::int64_t run_id);

  Database& db_;
  SQLite::Database& sql_;
  // Cached for the hot paths: ingest runs once per batch, the others once per request.
  SQLite::Statement run_exists_;
  SQLite::Statement insert_batch_;
  SQLite::Statement insert_metric_;
  SQLite::Statement upsert_param_;
};

}  // namespace nmt::tracker
