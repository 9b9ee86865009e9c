#pragma once
// The protocol between nmt-trackerd and its clients (tracker/API.md), as plain C++ values: one
// struct per request body, query and answer. The daemon's handler and store, the write client the
// trainer links and the read client of the tools all use these; their fields are listed in
// wire_fields.h, their JSON is in wire_json.h and the routes that carry them in routes.h. Absent
// values are nullopt here and null (or left out) on the wire.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace nmt::tracker::api {

// A run param: a number or a text. Bools are sent as true/false and read as the texts "true" and
// "false" (the store also gives them the numbers 1/0, so param.<key>=1 finds them).
using ParamValue = std::variant<double, std::string>;
using Params = std::map<std::string, ParamValue>;  // flat "section.key" -> value

// ---- requests ----------------------------------------------------------------------------------

// POST /api/runs: create, resume or replay a run by uid and attempt.
struct RunRegistration {
  std::string experiment;                 // created on first use
  std::string name;                       // a label: two runs may share it
  std::optional<std::string> uid;         // the client's id of the run (run_rules.h)
  std::optional<std::int64_t> attempt;    // absent: 1; above the stored attempt: a resume
  std::optional<std::string> sweep;       // groups the rows of an ablation table
  std::optional<std::string> row_label;   // e.g. "(A)"
  std::optional<std::int64_t> row_index;  // order of the row in its table
  std::optional<std::string> config;      // the resolved YAML text
  std::optional<std::string> config_hash;
  std::optional<std::string> git_revision;
  std::optional<std::string> host;
  std::optional<std::int64_t> world_size;
  std::optional<std::string> slurm_job_id;
  std::optional<std::string> slurm_array_id;
  Params params;
  // Where this attempt runs from, kept per attempt: the run directory's absolute path, and what
  // produced the run (command line, git state, library versions, devices, precision and why;
  // flat "group.key" -> value, tracker/API.md lists the trainer's keys).
  std::optional<std::string> run_dir;
  Params provenance;
};

// PUT /api/runs/{id}/status.
struct StatusUpdate {
  std::string status;                   // run_rules.h
  std::optional<std::int64_t> attempt;  // the attempt reporting it; absent: the current one
};

// POST /api/runs/{id}/heartbeat: the attempt is alive, whether or not it has anything to send.
struct Heartbeat {
  std::optional<std::int64_t> attempt;  // the attempt beating; absent: the current one
  std::optional<std::int64_t> rank;     // who sent it, for the log
};

struct MetricPoint {
  std::string key;
  std::int64_t step = 0;
  double value = 0.0;
  std::optional<double> time;  // seconds since the epoch; the ingest time when absent
};

// POST /api/runs/{id}/metrics: idempotent by (run, rank, sequence).
struct MetricBatch {
  std::int64_t rank = 0;
  std::int64_t sequence = 0;
  std::vector<MetricPoint> points;
};

// POST /api/runs/{id}/evals.
struct EvalRecord {
  std::string split;  // "valid", "test", ...
  std::optional<std::int64_t> step;
  std::optional<std::string> checkpoint;
  std::optional<double> bleu;  // non-finite figures are left out when sent
  std::optional<double> chrf;
  std::optional<double> perplexity;
  std::optional<std::string> signature;  // the sacreBLEU-style signature
};

// POST /api/runs/{id}/artifacts.
struct ArtifactRecord {
  std::string kind;  // "checkpoint", "averaged", ...
  std::string path;
  std::optional<std::int64_t> step;
  std::optional<std::int64_t> averaged_from;  // number of checkpoints averaged
  // The file's text (UTF-8), for a text artifact whose path ends in an extension of
  // artifact_content_type() (a report, a chart); served by GET .../artifacts/{id}/content and
  // never part of a run's detail. Defaulted, so that {kind, path, step, averaged_from} still
  // initializes a record whole.
  std::optional<std::string> content = std::nullopt;
};

// ---- answers to writes -------------------------------------------------------------------------

struct RunCreated {
  std::int64_t run_id = 0;
  std::int64_t attempt = 1;  // the run's current attempt
  bool resumed = false;      // true only when this call started a new attempt of an existing run
};

struct StatusAnswer {
  std::int64_t run_id = 0;
  std::string status;
};

// The attempt's status once the heartbeat is recorded ("running" again after a "crashed" the
// daemon gave it for its silence).
struct HeartbeatAnswer {
  std::int64_t run_id = 0;
  std::int64_t attempt = 1;
  std::string status;
};

struct IngestAnswer {
  std::int64_t stored = 0;  // points written by this call
  bool duplicate = false;   // the (run, rank, sequence) batch was already stored
};

struct EvalCreated {
  std::int64_t eval_id = 0;
};

struct ArtifactCreated {
  std::int64_t artifact_id = 0;
};

// DELETE /api/runs/{id} and POST /api/runs/{id}/restore.
struct DeleteAnswer {
  std::int64_t run_id = 0;
  bool deleted = false;
};

struct Health {
  std::string status = "ok";
  int schema_version = 0;
};

// Every 4xx/5xx answer.
struct ErrorAnswer {
  std::string error;
  std::optional<std::string> field;  // the JSON path or query parameter at fault
};

// ---- answers to reads --------------------------------------------------------------------------

struct RunSummary {
  std::int64_t run_id = 0;
  std::string experiment;
  std::string name;
  std::optional<std::string> uid;
  std::optional<std::string> sweep;
  std::optional<std::string> row_label;
  std::optional<std::int64_t> row_index;
  std::string status;
  std::optional<std::string> config_hash;
  std::optional<std::string> git_revision;
  std::optional<std::string> host;
  std::optional<std::int64_t> world_size;
  std::optional<std::string> slurm_job_id;
  std::optional<std::string> slurm_array_id;
  std::int64_t attempt = 1;  // the current attempt
  double started_at = 0;     // the run's first start
  std::optional<double> ended_at;
  std::optional<double> deleted_at;  // soft-deleted runs only
  std::int64_t attempts = 0;         // attempts seen (the "attempts" count of a summary)
  double duration_s = 0;             // ended_at (or now, while running) - started_at
  // Only when asked for (GET /api/runs?metrics=... / evals=... / params=...).
  std::optional<std::map<std::string, double>> last_metrics;  // newest point's value per key
  // Per split, the figures of its latest eval (newest created_at, then eval_id), keyed
  // "SPLIT/bleu", "SPLIT/chrf", "SPLIT/ppl" (the perplexity); a figure that eval lacks is absent.
  std::optional<std::map<std::string, double>> last_evals;
  std::optional<Params> params;
};

struct Attempt {
  std::int64_t attempt = 1;
  std::string status;
  double started_at = 0;
  std::optional<double> ended_at;
  std::optional<std::string> host;
  std::optional<std::int64_t> world_size;
  std::optional<std::string> slurm_job_id;
  std::optional<std::string> slurm_array_id;
  std::optional<std::string> run_dir;  // as registered by the attempt
  Params provenance;                   // likewise; empty when it sent none
  // Its last word to the daemon: registration, heartbeat or status; null before schema 8.
  std::optional<double> last_contact_at;
};

struct Eval {
  std::int64_t eval_id = 0;
  EvalRecord record;
  double created_at = 0;
};

struct Artifact {
  std::int64_t artifact_id = 0;
  ArtifactRecord record;  // without its content
  double created_at = 0;
  bool has_content = false;  // GET .../artifacts/{artifact_id}/content serves it
};

// GET /api/runs/{id}: the summary (its `attempts` count is the length of `attempts` below, which
// takes that name on the wire) and everything recorded about the run.
struct RunDetail {
  RunSummary summary;
  std::optional<std::string> config;
  Params params;
  std::vector<Attempt> attempts;
  std::vector<Eval> evals;
  std::vector<Artifact> artifacts;
  std::vector<std::string> metric_keys;
};

// A series point; downsampled, one step bucket: `step` its first step, `value` the mean, `rank`
// only when one rank alone is in it, `time` the latest.
struct SeriesPoint {
  std::int64_t step = 0;
  double value = 0;
  double min = 0;
  double max = 0;
  std::optional<std::int64_t> rank;
  double time = 0;
};

struct LastPoint {
  std::int64_t step = 0;
  double value = 0;
  std::int64_t rank = 0;
  double time = 0;
};

// GET /api/runs/{id}/metrics.
struct MetricSeries {
  std::string key;
  std::vector<SeriesPoint> points;  // ordered by step
  std::int64_t total_points = 0;    // stored points
  bool downsampled = false;
  std::optional<LastPoint> last;  // the newest point exactly, also when downsampled
};

// One series of GET /api/series: its run and, flattened, the series as the single route answers.
struct RunSeries {
  std::int64_t run_id = 0;
  MetricSeries series;
};

// GET /api/series.
struct SeriesList {
  std::vector<RunSeries> series;  // by run as asked, then by key
  std::int64_t max_points = 0;    // the bound each series was read with
};

// GET /api/runs.
struct RunList {
  std::vector<RunSummary> runs;
};

// GET /api/sweeps.
struct SweepSummary {
  std::string sweep;
  std::int64_t runs = 0;
  std::int64_t finished = 0;
  std::int64_t running = 0;
  std::optional<std::string> experiment;  // when all its runs share one
};

struct SweepList {
  std::vector<SweepSummary> sweeps;
};

// A column of the sweep table: a param that varies among the sweep's runs, a result, or one of
// the paper's reference figures.
enum class ColumnKind { kParam, kMetric, kEval, kReference };

struct SweepColumn {
  std::string name;  // the key of each row's `values`
  ColumnKind kind = ColumnKind::kParam;
};

struct SweepRow {
  std::int64_t run_id = 0;
  std::string name;
  std::optional<std::string> row_label;
  std::optional<std::int64_t> row_index;
  std::string status;
  std::map<std::string, std::optional<ParamValue>> values;  // column -> value (null: none)
};

// GET /api/sweeps/{name}/table.
struct SweepTable {
  std::string sweep;
  std::vector<SweepColumn> columns;
  std::vector<SweepRow> rows;  // by row_index, then run id
};

}  // namespace nmt::tracker::api
