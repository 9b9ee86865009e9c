#pragma once
// The fields of every wire type (wire_types.h), each listed once: the JSON key, the member, and
// what the protocol (tracker/API.md) says of it. The one list drives both ways of the JSON
// (wire_json.h): the writer and the reader, whose errors name the field by the key's path.
//
//   template <class V>
//   void fields(V& v, ArtifactRecord& x) {
//     v("kind", x.kind);                           // required: present, not null, not ""
//     v("step", x.step, kStepRange);               // std::optional: may be absent or null
//     v("averaged_from", x.averaged_from, kCountRange);
//   }
//
// Whether a field is required follows from its member: a plain value is required, a
// std::optional one is not (written as null in answers, left out of requests); the notes below
// mark the exceptions and the rules the reader checks. A visitor is called as
// v(key, member, notes...); v.flatten(s) lists the fields of the struct `s` in this object;
// v.on_read(f) runs f once the reader has read the fields before it.

#include <cstdint>

#include "common/named_choices.h"
#include "tracker/api/run_rules.h"
#include "tracker/api/wire_types.h"

namespace nmt::tracker::api {

// ---- notes on a field --------------------------------------------------------------------------

// An integer of at least `min`: "must be an integer of at least {min}".
struct AtLeast {
  std::int64_t min = 0;
};

// An integer from `min` to `max`: "must be an integer from {min} to {max}".
struct InRange {
  std::int64_t min = 0;
  std::int64_t max = 0;
};

// The ranges of run_rules.h: steps; ranks and sweep rows (from 0); attempts, world sizes and
// checkpoint counts (from 1). Requests are checked; answers hold what the store holds.
inline constexpr InRange kStepRange{0, kMaxStep};
inline constexpr InRange kIndexRange{0, kMaxCount - 1};
inline constexpr InRange kCountRange{1, kMaxCount};

// A text that `valid` accepts; `rule` is the error.
struct TextRule {
  bool (*valid)(const std::string&) = nullptr;
  const char* rule = "";
};

// A plain value that may be absent or null on the wire (it keeps the struct's value then), and
// is always written.
struct OrDefault {};

// Like OrDefault, but left out of the JSON when empty.
struct OmitIfEmpty {};

// A std::optional value left out when absent, also in answers (which otherwise write null).
struct LeftOut {};

inline constexpr TextRule kRunUid{is_valid_run_uid, kRunUidRule};
inline constexpr TextRule kRunStatus{is_valid_run_status, kRunStatusRule};

inline constexpr NamedChoices<ColumnKind, 4> kColumnKinds{
    {{{ColumnKind::kParam, "param"},
      {ColumnKind::kMetric, "metric"},
      {ColumnKind::kEval, "eval"},
      {ColumnKind::kReference, "reference"}}}};

// ---- requests ----------------------------------------------------------------------------------

template <class V>
void fields(V& v, RunRegistration& x) {
  v("experiment", x.experiment);
  v("name", x.name);
  v("uid", x.uid, kRunUid);
  v("attempt", x.attempt, kCountRange);
  v("sweep", x.sweep);
  v("row_label", x.row_label);
  v("row_index", x.row_index, kIndexRange);
  v("config", x.config);
  v("config_hash", x.config_hash);
  v("git_revision", x.git_revision);
  v("host", x.host);
  v("world_size", x.world_size, kCountRange);
  v("slurm_job_id", x.slurm_job_id);
  v("slurm_array_id", x.slurm_array_id);
  v("params", x.params, OmitIfEmpty{});
  v("run_dir", x.run_dir);
  v("provenance", x.provenance, OmitIfEmpty{});
}

template <class V>
void fields(V& v, StatusUpdate& x) {
  v("status", x.status, kRunStatus);
  v("attempt", x.attempt, kCountRange);
}

template <class V>
void fields(V& v, Heartbeat& x) {
  v("attempt", x.attempt, kCountRange);
  v("rank", x.rank, kIndexRange);
}

template <class V>
void fields(V& v, MetricPoint& x) {
  v("key", x.key);
  v("step", x.step, kStepRange);
  v("value", x.value);
  v("time", x.time);
}

template <class V>
void fields(V& v, MetricBatch& x) {
  v("rank", x.rank, kIndexRange);
  v("sequence", x.sequence, AtLeast{0});
  v("points", x.points);
}

template <class V>
void fields(V& v, EvalRecord& x) {
  v("split", x.split);
  v("step", x.step, kStepRange);
  v("checkpoint", x.checkpoint);
  v("bleu", x.bleu);
  v("chrf", x.chrf);
  v("perplexity", x.perplexity);
  v("signature", x.signature);
}

template <class V>
void fields(V& v, ArtifactRecord& x) {
  v("kind", x.kind);
  v("path", x.path);
  v("step", x.step, kStepRange);
  v("averaged_from", x.averaged_from, kCountRange);
  v("content", x.content, LeftOut{});
}

// ---- answers to writes -------------------------------------------------------------------------

template <class V>
void fields(V& v, RunCreated& x) {
  v("run_id", x.run_id);
  v("attempt", x.attempt);
  v("resumed", x.resumed);
}

template <class V>
void fields(V& v, StatusAnswer& x) {
  v("run_id", x.run_id);
  v("status", x.status);
}

template <class V>
void fields(V& v, HeartbeatAnswer& x) {
  v("run_id", x.run_id);
  v("attempt", x.attempt);
  v("status", x.status);
}

template <class V>
void fields(V& v, IngestAnswer& x) {
  v("stored", x.stored);
  v("duplicate", x.duplicate);
}

template <class V>
void fields(V& v, EvalCreated& x) {
  v("eval_id", x.eval_id);
}

template <class V>
void fields(V& v, ArtifactCreated& x) {
  v("artifact_id", x.artifact_id);
}

template <class V>
void fields(V& v, DeleteAnswer& x) {
  v("run_id", x.run_id);
  v("deleted", x.deleted);
}

template <class V>
void fields(V& v, Health& x) {
  v("status", x.status);
  v("schema_version", x.schema_version);
}

template <class V>
void fields(V& v, ErrorAnswer& x) {
  v("error", x.error, OrDefault{});
  v("field", x.field);
}

// ---- answers to reads --------------------------------------------------------------------------

// A run summary's fields; `attempts_count`: whether "attempts" is the summary's count (a run
// detail's "attempts" is the list of attempts instead).
template <class V>
void summary_fields(V& v, RunSummary& x, bool attempts_count) {
  v("run_id", x.run_id);
  v("experiment", x.experiment);
  v("name", x.name);
  v("uid", x.uid);
  v("sweep", x.sweep);
  v("row_label", x.row_label);
  v("row_index", x.row_index);
  v("status", x.status);
  v("config_hash", x.config_hash);
  v("git_revision", x.git_revision);
  v("host", x.host);
  v("world_size", x.world_size);
  v("slurm_job_id", x.slurm_job_id);
  v("slurm_array_id", x.slurm_array_id);
  v("attempt", x.attempt);
  v("started_at", x.started_at);
  v("ended_at", x.ended_at);
  v("deleted_at", x.deleted_at);
  if (attempts_count) v("attempts", x.attempts);
  v("duration_s", x.duration_s);
  v("last_metrics", x.last_metrics, LeftOut{});
  v("last_evals", x.last_evals, LeftOut{});
  v("params", x.params, LeftOut{});
}

template <class V>
void fields(V& v, RunSummary& x) {
  summary_fields(v, x, true);
}

template <class V>
void fields(V& v, RunList& x) {
  v("runs", x.runs);
}

template <class V>
void fields(V& v, Attempt& x) {
  v("attempt", x.attempt);
  v("status", x.status);
  v("started_at", x.started_at);
  v("ended_at", x.ended_at);
  v("host", x.host);
  v("world_size", x.world_size);
  v("slurm_job_id", x.slurm_job_id);
  v("slurm_array_id", x.slurm_array_id);
  v("run_dir", x.run_dir);
  v("provenance", x.provenance, OrDefault{});
  v("last_contact_at", x.last_contact_at);
}

template <class V>
void fields(V& v, Eval& x) {
  v("eval_id", x.eval_id);
  v.flatten(x.record);
  v("created_at", x.created_at);
}

template <class V>
void fields(V& v, Artifact& x) {
  v("artifact_id", x.artifact_id);
  v.flatten(x.record);
  v("created_at", x.created_at);
  v("has_content", x.has_content, OrDefault{});
}

template <class V>
void fields(V& v, RunDetail& x) {
  summary_fields(v, x.summary, false);
  v("config", x.config);
  v("params", x.params);
  v("attempts", x.attempts);
  v.on_read([&x] { x.summary.attempts = static_cast<std::int64_t>(x.attempts.size()); });
  v("evals", x.evals);
  v("artifacts", x.artifacts);
  v("metric_keys", x.metric_keys);
}

template <class V>
void fields(V& v, SeriesPoint& x) {
  v("step", x.step);
  v("value", x.value);
  v("min", x.min);
  v("max", x.max);
  v("rank", x.rank);
  v("time", x.time);
}

template <class V>
void fields(V& v, LastPoint& x) {
  v("step", x.step);
  v("value", x.value);
  v("rank", x.rank);
  v("time", x.time);
}

template <class V>
void fields(V& v, MetricSeries& x) {
  v("key", x.key);
  v("points", x.points);
  v("total_points", x.total_points);
  v("downsampled", x.downsampled);
  v("last", x.last);
}

template <class V>
void fields(V& v, RunSeries& x) {
  v("run_id", x.run_id);
  v.flatten(x.series);
}

template <class V>
void fields(V& v, SeriesList& x) {
  v("series", x.series);
  v("max_points", x.max_points);
}

template <class V>
void fields(V& v, SweepSummary& x) {
  v("sweep", x.sweep);
  v("runs", x.runs);
  v("finished", x.finished);
  v("running", x.running);
  v("experiment", x.experiment);
}

template <class V>
void fields(V& v, SweepList& x) {
  v("sweeps", x.sweeps);
}

template <class V>
void fields(V& v, SweepColumn& x) {
  v("name", x.name);
  v("kind", x.kind, kColumnKinds);
}

template <class V>
void fields(V& v, SweepRow& x) {
  v("run_id", x.run_id);
  v("name", x.name);
  v("row_label", x.row_label);
  v("row_index", x.row_index);
  v("status", x.status);
  v("values", x.values);
}

template <class V>
void fields(V& v, SweepTable& x) {
  v("sweep", x.sweep);
  v("columns", x.columns);
  v("rows", x.rows);
}

}  // namespace nmt::tracker::api
