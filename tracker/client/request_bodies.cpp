#include "tracker/client/request_bodies.h"

#include <cmath>
#include <optional>
#include <type_traits>
#include <utility>

namespace nmt::tracker {
namespace {

using json = nlohmann::json;

std::string dump(const json& j) {
  return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

void put_if(json& j, const char* key, const std::string& value) {
  if (!value.empty()) j[key] = value;
}

template <class T>
void put_if(json& j, const char* key, const std::optional<T>& value) {
  if constexpr (std::is_floating_point_v<T>) {
    if (value && std::isfinite(*value)) j[key] = *value;
  } else {
    if (value) j[key] = *value;
  }
}

}  // namespace

std::string run_body(const RunInfo& info) {
  json j = {{"experiment", info.experiment}, {"name", info.name}};
  put_if(j, "uid", info.uid);
  put_if(j, "attempt", info.attempt);
  put_if(j, "sweep", info.sweep);
  put_if(j, "row_label", info.row_label);
  put_if(j, "row_index", info.row_index);
  put_if(j, "config", info.config);
  put_if(j, "config_hash", info.config_hash);
  put_if(j, "git_revision", info.git_revision);
  put_if(j, "host", info.host);
  put_if(j, "world_size", info.world_size);
  put_if(j, "slurm_job_id", info.slurm_job_id);
  put_if(j, "slurm_array_id", info.slurm_array_id);
  if (!info.params.empty()) j["params"] = info.params;
  return dump(j);
}

std::string eval_body(const EvalRecord& eval) {
  json j = {{"split", eval.split}};
  put_if(j, "step", eval.step);
  put_if(j, "checkpoint", eval.checkpoint);
  put_if(j, "bleu", eval.bleu);
  put_if(j, "chrf", eval.chrf);
  put_if(j, "perplexity", eval.perplexity);
  put_if(j, "signature", eval.signature);
  return dump(j);
}

std::string artifact_body(const ArtifactRecord& artifact) {
  json j = {{"kind", artifact.kind}, {"path", artifact.path}};
  put_if(j, "step", artifact.step);
  put_if(j, "averaged_from", artifact.averaged_from);
  return dump(j);
}

std::string status_body(RunStatus status, std::optional<int> attempt) {
  json j = {{"status", to_string(status)}};
  put_if(j, "attempt", attempt);
  return dump(j);
}

std::string metrics_body(std::int64_t rank, std::int64_t sequence, json points) {
  return dump(json{{"rank", rank}, {"sequence", sequence}, {"points", std::move(points)}});
}

json metric_point(const std::string& key, std::int64_t step, double value, double time) {
  return json{{"key", key}, {"step", step}, {"value", value}, {"time", time}};
}

}  // namespace nmt::tracker
