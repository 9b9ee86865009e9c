#pragma once
// The tracker's operations over its SQLite database: runs (created, or resumed by uid), params,
// attempts, metric batches (idempotent by run, rank and sequence; one point per run, key and step,
// the latest delivered), evals, artifacts, and the
// queries behind the HTTP API in tracker/API.md. Every write is one transaction and returns only
// after commit. Not thread-safe: one RunStore per connection, callers serialize (the request
// handler does).

#include <SQLiteCpp/Statement.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tracker/api/run_query.h"
#include "tracker/api/wire_types.h"
#include "tracker/store/database.h"

namespace nmt::tracker {

// An unknown run or sweep; the handler answers 404. Bad input is std::invalid_argument (400).
class NotFound : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A uid given with an experiment or name other than its run's: most likely a run directory copied
// with its uid file. Refused (409) rather than merged.
class Conflict : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The store speaks the protocol's value types (tracker/api/wire_types.h) where a row is exactly
// one of them: what a write carries, a run summary or detail, a metric series, a sweep summary.
// The sweep table is the exception: the store gives its runs' rows (SweepRun), and which columns
// the table shows is decided from them outside the store (tracker/server/sweep_layout.h).
using RunSpec = api::RunRegistration;  // a run is found again only by its uid, never its name
using RunHandle = api::RunCreated;
using MetricPoint = api::MetricPoint;
using IngestResult = api::IngestAnswer;
using EvalRecord = api::EvalRecord;
using ArtifactRecord = api::ArtifactRecord;

// The newest eval of one split (by id): the figures a sweep table shows.
struct EvalFigures {
  std::optional<double> perplexity;
  std::optional<double> bleu;
};

// An artifact's path and its text (nullopt when it was recorded without).
struct ArtifactContent {
  std::string path;
  std::optional<std::string> content;
};

// One run of a sweep, with everything a sweep table may show of it.
struct SweepRun {
  std::int64_t run_id = 0;
  std::string name;
  std::optional<std::string> row_label;
  std::optional<std::int64_t> row_index;
  std::string status;
  api::Params params;
  std::optional<EvalFigures> valid;  // newest eval with split "valid"
  std::optional<EvalFigures> test;   // newest eval with split "test"
};

// An attempt the daemon found silent (RunStore::mark_silent_attempts).
struct SilentAttempt {
  std::int64_t run_id = 0;
  std::int64_t attempt = 0;
  double last_contact_at = 0;
};

class RunStore {
 public:
  // `db` must outlive the store; the store caches prepared statements on its connection.
  explicit RunStore(Database& db);

  int schema_version() { return db_.schema_version(); }
  // The database's file name, as it was opened (":memory:" for one in memory).
  const std::string& database_path() const { return db_.path(); }

  // No uid, or an unknown one: a new run. A known uid with a higher attempt: that run resumed
  // (attempt, status running, provenance sent, params upserted; its earlier attempts still running
  // become crashed, ended at the new attempt's start). A known uid with an attempt not
  // above the stored one: a replayed registration, answered with the run as it is, changing
  // nothing. Throws Conflict when the uid's run has another experiment or name.
  RunHandle create_or_resume_run(const RunSpec& spec);
  // status: see api::is_valid_run_status; all but running set ended_at, running clears it.
  // Applies to the run and its current attempt; with `attempt` (an older one) to that attempt's
  // row only, so that a late report of a preempted attempt cannot end the attempt now running
  // (and replaces `crashed` there: the attempt's own report is the more precise).
  void set_status(std::int64_t run_id, const std::string& status,
                  std::optional<std::int64_t> attempt = std::nullopt);
  // The attempt (the current one when absent) is alive: its last contact is now. A current
  // attempt the daemon marked crashed for its silence is running again, and so is its run.
  // NotFound for an unknown run or attempt.
  api::HeartbeatAnswer heartbeat(std::int64_t run_id, std::optional<std::int64_t> attempt);
  // Every attempt still running whose last contact is more than `silence_s` seconds old becomes
  // crashed, ended at its last contact, and so does its run where it is the current attempt.
  // Returns those attempts.
  std::vector<SilentAttempt> mark_silent_attempts(double silence_s);
  IngestResult ingest_metrics(std::int64_t run_id, std::int64_t rank, std::int64_t sequence,
                              const std::vector<MetricPoint>& points);
  // An eval equal to one the run has (split, step, checkpoint, figures, signature) is that eval:
  // its id, nothing written; so a record delivered twice (a spool replayed, a run synced again)
  // is kept once.
  std::int64_t log_eval(std::int64_t run_id, const EvalRecord& eval);
  // An artifact with the (kind, path, step) of one the run has is that artifact: its id; the
  // content and averaged_from sent replace the stored ones when they differ (absent ones keep
  // them), created_at is kept.
  std::int64_t log_artifact(std::int64_t run_id, const ArtifactRecord& artifact);
  // For the per-run limits (api::WriteLimits), asked by a caller that holds off every other write
  // until its own is done. The distinct metric keys run `run_id` would have with `keys` (distinct)
  // stored, its own counted no further than `cap` + 1; nullopt when it has every one of `keys`.
  std::optional<std::int64_t> metric_key_count_with(std::int64_t run_id,
                                                    const std::vector<std::string>& keys,
                                                    std::int64_t cap);
  // The params the run `spec` registers would have once written; nullopt when the registration
  // adds no param key (none sent, a replay, only keys the run has).
  std::optional<std::int64_t> param_count_with(const RunSpec& spec);
  // Soft delete (sets deleted_at, kept when already set) or restore (clears it). NotFound for an
  // unknown run.
  void set_deleted(std::int64_t run_id, bool deleted);

  // The runs `query` selects, ordered by its sort (runs without the value last), else by id.
  std::vector<api::RunSummary> list_runs(const api::RunQuery& query);
  api::RunDetail get_run(std::int64_t run_id);
  // NotFound for an unknown run, or an artifact that is not the run's.
  ArtifactContent artifact_content(std::int64_t run_id, std::int64_t artifact_id);
  // max_points: at most that many points, one per step bucket with mean value and min/max.
  // after_step: a page of the stored points instead: those past that step, in step order, the
  // first max_points of them, never downsampled (total_points and last still cover the series).
  api::MetricSeries metric_series(std::int64_t run_id, const std::string& key,
                                  std::optional<std::int64_t> max_points,
                                  std::optional<std::int64_t> rank,
                                  std::optional<std::int64_t> after_step = std::nullopt);
  // The run's metric keys, by key (one index seek each). NotFound for an unknown run.
  std::vector<std::string> series_keys(std::int64_t run_id);
  // Every sweep with runs that are not deleted, by name.
  std::vector<api::SweepSummary> list_sweeps();
  // The sweep's runs that are not deleted, by row_index, then id. NotFound when there are none.
  std::vector<SweepRun> sweep_runs(const std::string& sweep);

 private:
  std::int64_t experiment_id(const std::string& name, double now);
  RunHandle insert_run(std::int64_t experiment, const RunSpec& spec, double now);
  RunHandle resume_run(std::int64_t run_id, const RunSpec& spec, double now);
  void insert_attempt(std::int64_t run_id, const RunSpec& spec, double now);
  void upsert_params(std::int64_t run_id, const api::Params& params);
  void require_run(std::int64_t run_id);
  // One row of a run's records (evals, artifacts), in the caller's transaction: `sql` lists run_id
  // first and created_at last; `bind_fields` binds the record's own fields in between. Returns the
  // row's id.
  std::int64_t insert_record(std::int64_t run_id, const char* sql,
                             const std::function<void(SQLite::Statement&)>& bind_fields);
  // The id of the run's row that `find_sql` (run_id first, then what `bind_fields` binds) selects.
  std::optional<std::int64_t> find_record(
      std::int64_t run_id, const char* find_sql,
      const std::function<void(SQLite::Statement&)>& bind_fields);
  api::Params run_params(std::int64_t run_id);
  std::vector<std::string> metric_keys(std::int64_t run_id);
  // The newest point of a series: its highest step (one point per step), of `rank` when given.
  std::optional<api::LastPoint> last_point(std::int64_t run_id, const std::string& key,
                                           std::optional<std::int64_t> rank);
  void add_columns(std::vector<api::RunSummary>& runs, const api::RunQuery& query);
  std::map<std::string, double> last_evals(std::int64_t run_id);
  std::optional<EvalFigures> newest_eval(std::int64_t run_id, const char* split);

  Database& db_;
  SQLite::Database& sql_;
  // Cached for the hot paths: ingest runs once per batch, the others once per request (the last
  // points and evals once per listed run).
  SQLite::Statement run_exists_;
  SQLite::Statement insert_batch_;
  SQLite::Statement upsert_metric_;
  SQLite::Statement upsert_param_;
  SQLite::Statement last_point_;
  SQLite::Statement last_point_of_rank_;
  SQLite::Statement last_evals_;
};

}  // namespace nmt::tracker
