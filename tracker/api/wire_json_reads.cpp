// JSON of the answers to reads (tracker/API.md): run summaries and details, metric series, sweep
// lists and tables. Answers spell out absent values as null.

#include "tracker/api/wire_json.h"
#include "tracker/api/wire_json_detail.h"

namespace nmt::tracker::api {

using detail::put_or_null;
using nlohmann::json;

namespace {

// The items of the array field `name` of `f`, each read as a T.
template <class T>
std::vector<T> read_items(const Fields& f, const char* name) {
  const json& items = f.array(name);
  const std::string path = f.path(name);
  std::vector<T> out(items.size());
  for (std::size_t i = 0; i < items.size(); ++i) {
    read(object_fields(items[i], path, static_cast<std::ptrdiff_t>(i)), out[i]);
  }
  return out;
}

std::optional<ParamValue> read_value(const json& value, const std::string& path) {
  if (value.is_null()) return std::nullopt;
  if (value.is_number()) return ParamValue(value.get<double>());
  if (value.is_string()) return ParamValue(value.get<std::string>());
  bad_field(path, "must be a number, a string or null");
}

void put_summary(json& j, const RunSummary& value) {
  j["run_id"] = value.run_id;
  j["experiment"] = value.experiment;
  j["name"] = value.name;
  put_or_null(j, "uid", value.uid);
  put_or_null(j, "sweep", value.sweep);
  put_or_null(j, "row_label", value.row_label);
  put_or_null(j, "row_index", value.row_index);
  j["status"] = value.status;
  put_or_null(j, "config_hash", value.config_hash);
  put_or_null(j, "git_revision", value.git_revision);
  put_or_null(j, "host", value.host);
  put_or_null(j, "world_size", value.world_size);
  put_or_null(j, "slurm_job_id", value.slurm_job_id);
  put_or_null(j, "slurm_array_id", value.slurm_array_id);
  j["attempt"] = value.attempt;
  j["started_at"] = value.started_at;
  put_or_null(j, "ended_at", value.ended_at);
  put_or_null(j, "deleted_at", value.deleted_at);
  j["attempts"] = value.attempts;
  j["duration_s"] = value.duration_s;
  if (value.last_metrics) j["last_metrics"] = *value.last_metrics;
  if (value.params) j["params"] = *value.params;
}

// `attempts_count`: a summary's "attempts" is a count; a run detail's is the list of attempts.
void read_summary(const Fields& f, RunSummary& out, bool attempts_count) {
  out.run_id = f.integer("run_id");
  out.experiment = f.text("experiment");
  out.name = f.text("name");
  out.uid = f.optional_text("uid");
  out.sweep = f.optional_text("sweep");
  out.row_label = f.optional_text("row_label");
  out.row_index = f.optional_integer("row_index");
  out.status = f.text("status");
  out.config_hash = f.optional_text("config_hash");
  out.git_revision = f.optional_text("git_revision");
  out.host = f.optional_text("host");
  out.world_size = f.optional_integer("world_size");
  out.slurm_job_id = f.optional_text("slurm_job_id");
  out.slurm_array_id = f.optional_text("slurm_array_id");
  out.attempt = f.integer("attempt");
  out.started_at = f.number("started_at");
  out.ended_at = f.optional_number("ended_at");
  out.deleted_at = f.optional_number("deleted_at");
  if (attempts_count) out.attempts = f.integer("attempts");
  out.duration_s = f.number("duration_s");
  if (const json* last = f.optional_object("last_metrics")) {
    const std::string path = f.path("last_metrics");  // outlives `metrics`, which views it
    const Fields metrics(*last, path);
    out.last_metrics.emplace();
    for (const auto& [key, value] : last->items())
      (*out.last_metrics)[key] = metrics.number(key.c_str());
  }
  if (const json* params = f.optional_object("params")) {
    out.params = read_params(*params, f.path("params"));
  }
}

}  // namespace

void to_json(json& j, const RunSummary& value) {
  j = json::object();
  put_summary(j, value);
}

void read(const Fields& f, RunSummary& out) {
  read_summary(f, out, true);
}

void to_json(json& j, const RunList& value) {
  j = {{"runs", value.runs}};
}

void read(const Fields& f, RunList& out) {
  out.runs = read_items<RunSummary>(f, "runs");
}

void to_json(json& j, const Attempt& value) {
  j = {{"attempt", value.attempt}, {"status", value.status}, {"started_at", value.started_at}};
  put_or_null(j, "ended_at", value.ended_at);
  put_or_null(j, "host", value.host);
  put_or_null(j, "world_size", value.world_size);
  put_or_null(j, "slurm_job_id", value.slurm_job_id);
  put_or_null(j, "slurm_array_id", value.slurm_array_id);
}

void read(const Fields& f, Attempt& out) {
  out.attempt = f.integer("attempt");
  out.status = f.text("status");
  out.started_at = f.number("started_at");
  out.ended_at = f.optional_number("ended_at");
  out.host = f.optional_text("host");
  out.world_size = f.optional_integer("world_size");
  out.slurm_job_id = f.optional_text("slurm_job_id");
  out.slurm_array_id = f.optional_text("slurm_array_id");
}

void to_json(json& j, const Eval& value) {
  const EvalRecord& r = value.record;
  j = {{"eval_id", value.eval_id}, {"split", r.split}};
  put_or_null(j, "step", r.step);
  put_or_null(j, "checkpoint", r.checkpoint);
  put_or_null(j, "bleu", r.bleu);
  put_or_null(j, "chrf", r.chrf);
  put_or_null(j, "perplexity", r.perplexity);
  put_or_null(j, "signature", r.signature);
  j["created_at"] = value.created_at;
}

void read(const Fields& f, Eval& out) {
  out.eval_id = f.integer("eval_id");
  read(f, out.record);
  out.created_at = f.number("created_at");
}

void to_json(json& j, const Artifact& value) {
  const ArtifactRecord& r = value.record;
  j = {{"artifact_id", value.artifact_id}, {"kind", r.kind}, {"path", r.path}};
  put_or_null(j, "step", r.step);
  put_or_null(j, "averaged_from", r.averaged_from);
  j["created_at"] = value.created_at;
}

void read(const Fields& f, Artifact& out) {
  out.artifact_id = f.integer("artifact_id");
  read(f, out.record);
  out.created_at = f.number("created_at");
}

void to_json(json& j, const RunDetail& value) {
  j = json::object();
  put_summary(j, value.summary);
  put_or_null(j, "config", value.config);
  j["params"] = value.params;
  j["attempts"] = value.attempts;
  j["evals"] = value.evals;
  j["artifacts"] = value.artifacts;
  j["metric_keys"] = value.metric_keys;
}

void read(const Fields& f, RunDetail& out) {
  read_summary(f, out.summary, false);
  out.config = f.optional_text("config");
  out.params = read_params(f.object("params"), f.path("params"));
  out.attempts = read_items<Attempt>(f, "attempts");
  out.summary.attempts = static_cast<std::int64_t>(out.attempts.size());
  out.evals = read_items<Eval>(f, "evals");
  out.artifacts = read_items<Artifact>(f, "artifacts");
  const json& keys = f.array("metric_keys");
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (!keys[i].is_string())
      bad_field(fmt::format("{}[{}]", f.path("metric_keys"), i), "must be a string");
    out.metric_keys.push_back(keys[i].get<std::string>());
  }
}

void to_json(json& j, const SeriesPoint& value) {
  j = {{"step", value.step}, {"value", value.value}, {"min", value.min}, {"max", value.max}};
  put_or_null(j, "rank", value.rank);
  j["time"] = value.time;
}

void read(const Fields& f, SeriesPoint& out) {
  out.step = f.integer("step");
  out.value = f.number("value");
  out.min = f.number("min");
  out.max = f.number("max");
  out.rank = f.optional_integer("rank");
  out.time = f.number("time");
}

void to_json(json& j, const LastPoint& value) {
  j = {{"step", value.step}, {"value", value.value}, {"rank", value.rank}, {"time", value.time}};
}

void read(const Fields& f, LastPoint& out) {
  out.step = f.integer("step");
  out.value = f.number("value");
  out.rank = f.integer("rank");
  out.time = f.number("time");
}

void to_json(json& j, const MetricSeries& value) {
  j = {{"key", value.key},
       {"points", value.points},
       {"total_points", value.total_points},
       {"downsampled", value.downsampled}};
  put_or_null(j, "last", value.last);
}

void read(const Fields& f, MetricSeries& out) {
  out.key = f.text("key");
  out.points = read_items<SeriesPoint>(f, "points");
  out.total_points = f.integer("total_points");
  out.downsampled = f.boolean("downsampled");
  if (const json* last = f.optional_object("last")) {
    const std::string path = f.path("last");
    read(Fields(*last, path), out.last.emplace());
  }
}

void to_json(json& j, const SweepSummary& value) {
  j = {{"sweep", value.sweep},
       {"runs", value.runs},
       {"finished", value.finished},
       {"running", value.running}};
  put_or_null(j, "experiment", value.experiment);
}

void read(const Fields& f, SweepSummary& out) {
  out.sweep = f.text("sweep");
  out.runs = f.integer("runs");
  out.finished = f.integer("finished");
  out.running = f.integer("running");
  out.experiment = f.optional_text("experiment");
}

void to_json(json& j, const SweepList& value) {
  j = {{"sweeps", value.sweeps}};
}

void read(const Fields& f, SweepList& out) {
  out.sweeps = read_items<SweepSummary>(f, "sweeps");
}

const char* to_string(ColumnKind kind) {
  switch (kind) {
    case ColumnKind::kParam:
      return "param";
    case ColumnKind::kMetric:
      return "metric";
    case ColumnKind::kEval:
      return "eval";
    case ColumnKind::kReference:
      return "reference";
  }
  return "param";
}

void to_json(json& j, const SweepColumn& value) {
  j = {{"name", value.name}, {"kind", to_string(value.kind)}};
}

void read(const Fields& f, SweepColumn& out) {
  out.name = f.text("name");
  const std::string kind = f.text("kind");
  for (const ColumnKind k :
       {ColumnKind::kParam, ColumnKind::kMetric, ColumnKind::kEval, ColumnKind::kReference}) {
    if (kind == to_string(k)) {
      out.kind = k;
      return;
    }
  }
  bad_field(f.path("kind"), "must be one of param, metric, eval, reference");
}

void to_json(json& j, const SweepRow& value) {
  j = {{"run_id", value.run_id}, {"name", value.name}};
  put_or_null(j, "row_label", value.row_label);
  put_or_null(j, "row_index", value.row_index);
  j["status"] = value.status;
  json values = json::object();
  for (const auto& [column, cell] : value.values) values[column] = cell ? json(*cell) : json();
  j["values"] = std::move(values);
}

void read(const Fields& f, SweepRow& out) {
  out.run_id = f.integer("run_id");
  out.name = f.text("name");
  out.row_label = f.optional_text("row_label");
  out.row_index = f.optional_integer("row_index");
  out.status = f.text("status");
  const std::string path = f.path("values");
  for (const auto& [column, cell] : f.object("values").items()) {
    out.values[column] = read_value(cell, path + "." + column);
  }
}

void to_json(json& j, const SweepTable& value) {
  j = {{"sweep", value.sweep}, {"columns", value.columns}, {"rows", value.rows}};
}

void read(const Fields& f, SweepTable& out) {
  out.sweep = f.text("sweep");
  out.columns = read_items<SweepColumn>(f, "columns");
  out.rows = read_items<SweepRow>(f, "rows");
}

}  // namespace nmt::tracker::api
