#pragma once
// The JSON of every wire type (wire_types.h), both ways, as tracker/API.md writes it, each from
// its one field list (wire_fields.h). to_json is nlohmann's hook (`nlohmann::json j = value;`);
// reading goes through parse<T>(), which checks every field and throws FieldError naming it by its
// path ("points[3].value"): the daemon answers that as a 400, the read client as a malformed
// answer. Requests leave absent optional values out, and non-finite optional figures (a diverged
// perplexity) too, as JSON cannot carry them; answers to reads spell them out as null.

#include <nlohmann/json.hpp>

#include "common/json_fields.h"
#include "tracker/api/wire_types.h"

namespace nmt::tracker::api {

void to_json(nlohmann::json& j, const ParamValue& value);

// Each written and read as its field list (wire_fields.h) says.
void to_json(nlohmann::json& j, const RunRegistration& value);
void to_json(nlohmann::json& j, const StatusUpdate& value);
void to_json(nlohmann::json& j, const Heartbeat& value);
void to_json(nlohmann::json& j, const MetricPoint& value);
void to_json(nlohmann::json& j, const MetricBatch& value);
void to_json(nlohmann::json& j, const EvalRecord& value);
void to_json(nlohmann::json& j, const ArtifactRecord& value);
void to_json(nlohmann::json& j, const RunCreated& value);
void to_json(nlohmann::json& j, const StatusAnswer& value);
void to_json(nlohmann::json& j, const HeartbeatAnswer& value);
void to_json(nlohmann::json& j, const IngestAnswer& value);
void to_json(nlohmann::json& j, const EvalCreated& value);
void to_json(nlohmann::json& j, const ArtifactCreated& value);
void to_json(nlohmann::json& j, const DeleteAnswer& value);
void to_json(nlohmann::json& j, const Health& value);
void to_json(nlohmann::json& j, const ErrorAnswer& value);
void to_json(nlohmann::json& j, const RunSummary& value);
void to_json(nlohmann::json& j, const RunList& value);
void to_json(nlohmann::json& j, const Attempt& value);
void to_json(nlohmann::json& j, const Eval& value);
void to_json(nlohmann::json& j, const Artifact& value);
void to_json(nlohmann::json& j, const RunDetail& value);
void to_json(nlohmann::json& j, const SeriesPoint& value);
void to_json(nlohmann::json& j, const LastPoint& value);
void to_json(nlohmann::json& j, const MetricSeries& value);
void to_json(nlohmann::json& j, const RunSeries& value);
void to_json(nlohmann::json& j, const SeriesList& value);
void to_json(nlohmann::json& j, const SweepSummary& value);
void to_json(nlohmann::json& j, const SweepList& value);
void to_json(nlohmann::json& j, const SweepColumn& value);
void to_json(nlohmann::json& j, const SweepRow& value);
void to_json(nlohmann::json& j, const SweepTable& value);

// The fields of the object `f` as a T. Throws FieldError.
void read(const Fields& f, RunRegistration& out);
void read(const Fields& f, StatusUpdate& out);
void read(const Fields& f, Heartbeat& out);
void read(const Fields& f, MetricPoint& out);
void read(const Fields& f, MetricBatch& out);
void read(const Fields& f, EvalRecord& out);
void read(const Fields& f, ArtifactRecord& out);
void read(const Fields& f, RunCreated& out);
void read(const Fields& f, StatusAnswer& out);
void read(const Fields& f, HeartbeatAnswer& out);
void read(const Fields& f, IngestAnswer& out);
void read(const Fields& f, EvalCreated& out);
void read(const Fields& f, ArtifactCreated& out);
void read(const Fields& f, DeleteAnswer& out);
void read(const Fields& f, Health& out);
void read(const Fields& f, ErrorAnswer& out);
void read(const Fields& f, RunSummary& out);
void read(const Fields& f, RunList& out);
void read(const Fields& f, Attempt& out);
void read(const Fields& f, Eval& out);
void read(const Fields& f, Artifact& out);
void read(const Fields& f, RunDetail& out);
void read(const Fields& f, SeriesPoint& out);
void read(const Fields& f, LastPoint& out);
void read(const Fields& f, MetricSeries& out);
void read(const Fields& f, RunSeries& out);
void read(const Fields& f, SeriesList& out);
void read(const Fields& f, SweepSummary& out);
void read(const Fields& f, SweepList& out);
void read(const Fields& f, SweepColumn& out);
void read(const Fields& f, SweepRow& out);
void read(const Fields& f, SweepTable& out);

// A flat params object: numbers, texts and bools (as the texts "true"/"false"); `name` is its
// field, for errors.
Params read_params(const nlohmann::json& value, const std::string& name);

// "param", "metric", "eval", "reference" (kColumnKinds, wire_fields.h).
const char* to_string(ColumnKind kind);

// `value` (a whole body or answer) as a T; FieldError ("body" when it is not an object).
template <class T>
T parse(const nlohmann::json& value) {
  if (!value.is_object()) bad_field("body", "must be a JSON object");
  T out{};
  read(Fields(value), out);
  return out;
}

}  // namespace nmt::tracker::api

// ParamValue is a std::variant, whose namespace argument-dependent lookup searches instead of
// ours; this makes `json j = params;` find api::to_json all the same.
template <>
struct nlohmann::adl_serializer<nmt::tracker::api::ParamValue> {
  static void to_json(nlohmann::json& j, const nmt::tracker::api::ParamValue& value) {
    nmt::tracker::api::to_json(j, value);
  }
};
