// JSON of the requests that write (tracker/API.md) and of their answers. Reading a request checks
// every rule the protocol states (uid form, attempt and world size at least 1, a known status), so
// the daemon's 400s and the client's own checks are the same words.

#include <cmath>
#include <type_traits>

#include "tracker/api/run_rules.h"
#include "tracker/api/wire_json.h"
#include "tracker/api/wire_json_detail.h"

namespace nmt::tracker::api {

using detail::put;
using nlohmann::json;

void to_json(json& j, const ParamValue& value) {
  if (const double* number = std::get_if<double>(&value)) {
    j = number_json(*number);
  } else {
    j = std::get<std::string>(value);
  }
}

Params read_params(const json& value, const std::string& name) {
  if (!value.is_object()) bad_field(name, "must be an object of flat key: value pairs");
  Params params;
  for (const auto& [key, item] : value.items()) {
    if (key.empty()) bad_field(name, "must not have an empty key");
    if (item.is_boolean()) {
      params[key] = item.get<bool>() ? 1.0 : 0.0;
    } else if (item.is_number()) {
      params[key] = item.get<double>();
    } else if (item.is_string()) {
      params[key] = item.get<std::string>();
    } else {
      bad_field(name + "." + key, "must be a number, string or bool");
    }
  }
  return params;
}

void to_json(json& j, const RunRegistration& value) {
  j = {{"experiment", value.experiment}, {"name", value.name}};
  put(j, "uid", value.uid);
  put(j, "attempt", value.attempt);
  put(j, "sweep", value.sweep);
  put(j, "row_label", value.row_label);
  put(j, "row_index", value.row_index);
  put(j, "config", value.config);
  put(j, "config_hash", value.config_hash);
  put(j, "git_revision", value.git_revision);
  put(j, "host", value.host);
  put(j, "world_size", value.world_size);
  put(j, "slurm_job_id", value.slurm_job_id);
  put(j, "slurm_array_id", value.slurm_array_id);
  if (!value.params.empty()) j["params"] = value.params;
}

void read(const Fields& f, RunRegistration& out) {
  out.experiment = f.text("experiment");
  out.name = f.text("name");
  out.uid = f.optional_text("uid");
  if (out.uid && !is_valid_run_uid(*out.uid)) bad_field(f.path("uid"), kRunUidRule);
  out.attempt = f.optional_integer("attempt");
  if (out.attempt && *out.attempt < 1) {
    bad_field(f.path("attempt"), "must be an integer of at least 1");
  }
  out.sweep = f.optional_text("sweep");
  out.row_label = f.optional_text("row_label");
  out.row_index = f.optional_integer("row_index");
  out.config = f.optional_text("config");
  out.config_hash = f.optional_text("config_hash");
  out.git_revision = f.optional_text("git_revision");
  out.host = f.optional_text("host");
  out.world_size = f.optional_integer("world_size");
  if (out.world_size && *out.world_size < 1) {
    bad_field(f.path("world_size"), "must be an integer of at least 1");
  }
  out.slurm_job_id = f.optional_text("slurm_job_id");
  out.slurm_array_id = f.optional_text("slurm_array_id");
  if (const json* params = f.optional_object("params")) {
    out.params = read_params(*params, f.path("params"));
  }
}

void to_json(json& j, const StatusUpdate& value) {
  j = {{"status", value.status}};
  put(j, "attempt", value.attempt);
}

void read(const Fields& f, StatusUpdate& out) {
  out.status = f.text("status");
  if (!is_valid_run_status(out.status)) bad_field(f.path("status"), kRunStatusRule);
  out.attempt = f.optional_integer("attempt");
  if (out.attempt && *out.attempt < 1) {
    bad_field(f.path("attempt"), "must be an integer of at least 1");
  }
}

void to_json(json& j, const MetricPoint& value) {
  j = {{"key", value.key}, {"step", value.step}, {"value", value.value}};
  put(j, "time", value.time);
}

void read(const Fields& f, MetricPoint& out) {
  out.key = f.text("key");
  out.step = f.integer("step");
  out.value = f.number("value");
  out.time = f.optional_number("time");
}

void to_json(json& j, const MetricBatch& value) {
  j = {{"rank", value.rank}, {"sequence", value.sequence}, {"points", value.points}};
}

void read(const Fields& f, MetricBatch& out) {
  out.rank = f.integer("rank");
  if (out.rank < 0) bad_field(f.path("rank"), "must be an integer of at least 0");
  out.sequence = f.integer("sequence");
  const json& points = f.array("points");
  const std::string path = f.path("points");
  out.points.resize(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    read(object_fields(points[i], path, static_cast<std::ptrdiff_t>(i)), out.points[i]);
  }
}

void to_json(json& j, const EvalRecord& value) {
  j = {{"split", value.split}};
  put(j, "step", value.step);
  put(j, "checkpoint", value.checkpoint);
  put(j, "bleu", value.bleu);
  put(j, "chrf", value.chrf);
  put(j, "perplexity", value.perplexity);
  put(j, "signature", value.signature);
}

void read(const Fields& f, EvalRecord& out) {
  out.split = f.text("split");
  out.step = f.optional_integer("step");
  out.checkpoint = f.optional_text("checkpoint");
  out.bleu = f.optional_number("bleu");
  out.chrf = f.optional_number("chrf");
  out.perplexity = f.optional_number("perplexity");
  out.signature = f.optional_text("signature");
}

void to_json(json& j, const ArtifactRecord& value) {
  j = {{"kind", value.kind}, {"path", value.path}};
  put(j, "step", value.step);
  put(j, "averaged_from", value.averaged_from);
}

void read(const Fields& f, ArtifactRecord& out) {
  out.kind = f.text("kind");
  out.path = f.text("path");
  out.step = f.optional_integer("step");
  out.averaged_from = f.optional_integer("averaged_from");
  if (out.averaged_from && *out.averaged_from < 1) {
    bad_field(f.path("averaged_from"), "must be an integer of at least 1");
  }
}

void to_json(json& j, const RunCreated& value) {
  j = {{"run_id", value.run_id}, {"attempt", value.attempt}, {"resumed", value.resumed}};
}

void read(const Fields& f, RunCreated& out) {
  out.run_id = f.integer("run_id");
  out.attempt = f.integer("attempt");
  out.resumed = f.boolean("resumed");
}

void to_json(json& j, const StatusAnswer& value) {
  j = {{"run_id", value.run_id}, {"status", value.status}};
}

void read(const Fields& f, StatusAnswer& out) {
  out.run_id = f.integer("run_id");
  out.status = f.text("status");
}

void to_json(json& j, const IngestAnswer& value) {
  j = {{"stored", value.stored}, {"duplicate", value.duplicate}};
}

void read(const Fields& f, IngestAnswer& out) {
  out.stored = f.integer("stored");
  out.duplicate = f.boolean("duplicate");
}

void to_json(json& j, const EvalCreated& value) {
  j = {{"eval_id", value.eval_id}};
}

void read(const Fields& f, EvalCreated& out) {
  out.eval_id = f.integer("eval_id");
}

void to_json(json& j, const ArtifactCreated& value) {
  j = {{"artifact_id", value.artifact_id}};
}

void read(const Fields& f, ArtifactCreated& out) {
  out.artifact_id = f.integer("artifact_id");
}

void to_json(json& j, const DeleteAnswer& value) {
  j = {{"run_id", value.run_id}, {"deleted", value.deleted}};
}

void read(const Fields& f, DeleteAnswer& out) {
  out.run_id = f.integer("run_id");
  out.deleted = f.boolean("deleted");
}

void to_json(json& j, const Health& value) {
  j = {{"status", value.status}, {"schema_version", value.schema_version}};
}

void read(const Fields& f, Health& out) {
  out.status = f.text("status");
  out.schema_version = static_cast<int>(f.integer("schema_version"));
}

void to_json(json& j, const ErrorAnswer& value) {
  j = {{"error", value.error}};
  put(j, "field", value.field);
}

void read(const Fields& f, ErrorAnswer& out) {
  out.error = f.optional_text("error").value_or("");
  out.field = f.optional_text("field");
}

}  // namespace nmt::tracker::api
