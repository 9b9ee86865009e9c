// The JSON of the wire types, written and read by walking their field lists (wire_fields.h) with
// the visitors of wire_json_detail.h; only params, which have no fixed keys, are read by hand.

#include "tracker/api/wire_json.h"

#include "tracker/api/wire_json_detail.h"
#include "tracker/api/wire_text.h"

namespace nmt::tracker::api {

using detail::Absent;
using nlohmann::json;

namespace {

template <class T>
void write(json& j, const T& value, Absent absent) {
  j = json::object();
  detail::JsonWriter writer(j, absent);
  fields(writer, const_cast<T&>(value));  // the writer only reads
}

template <class T>
void read_fields(const Fields& f, T& out) {
  detail::JsonReader reader(f);
  fields(reader, out);
}

}  // namespace

// One line per wire type: its to_json, how it writes an absent value, and its read.
#define NMT_WIRE_JSON(Type, absent)          \
  void to_json(json& j, const Type& value) { \
    write(j, value, absent);                 \
  }                                          \
  void read(const Fields& f, Type& out) {    \
    read_fields(f, out);                     \
  }

NMT_WIRE_JSON(RunRegistration, Absent::kLeftOut)
NMT_WIRE_JSON(StatusUpdate, Absent::kLeftOut)
NMT_WIRE_JSON(Heartbeat, Absent::kLeftOut)
NMT_WIRE_JSON(MetricPoint, Absent::kLeftOut)
NMT_WIRE_JSON(MetricBatch, Absent::kLeftOut)
NMT_WIRE_JSON(EvalRecord, Absent::kLeftOut)
NMT_WIRE_JSON(ArtifactRecord, Absent::kLeftOut)
NMT_WIRE_JSON(RunCreated, Absent::kLeftOut)
NMT_WIRE_JSON(StatusAnswer, Absent::kLeftOut)
NMT_WIRE_JSON(HeartbeatAnswer, Absent::kLeftOut)
NMT_WIRE_JSON(IngestAnswer, Absent::kLeftOut)
NMT_WIRE_JSON(EvalCreated, Absent::kLeftOut)
NMT_WIRE_JSON(ArtifactCreated, Absent::kLeftOut)
NMT_WIRE_JSON(DeleteAnswer, Absent::kLeftOut)
NMT_WIRE_JSON(Health, Absent::kLeftOut)
NMT_WIRE_JSON(ErrorAnswer, Absent::kLeftOut)
NMT_WIRE_JSON(RunSummary, Absent::kNull)
NMT_WIRE_JSON(RunList, Absent::kNull)
NMT_WIRE_JSON(Attempt, Absent::kNull)
NMT_WIRE_JSON(Eval, Absent::kNull)
NMT_WIRE_JSON(Artifact, Absent::kNull)
NMT_WIRE_JSON(RunDetail, Absent::kNull)
NMT_WIRE_JSON(SeriesPoint, Absent::kNull)
NMT_WIRE_JSON(LastPoint, Absent::kNull)
NMT_WIRE_JSON(MetricSeries, Absent::kNull)
NMT_WIRE_JSON(RunSeries, Absent::kNull)
NMT_WIRE_JSON(SeriesList, Absent::kNull)
NMT_WIRE_JSON(SweepSummary, Absent::kNull)
NMT_WIRE_JSON(SweepList, Absent::kNull)
NMT_WIRE_JSON(SweepColumn, Absent::kNull)
NMT_WIRE_JSON(SweepRow, Absent::kNull)
NMT_WIRE_JSON(SweepTable, Absent::kNull)

#undef NMT_WIRE_JSON

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
      params[key] = std::string(item.get<bool>() ? "true" : "false");
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

const char* to_string(ColumnKind kind) {
  return kColumnKinds.name(kind);
}

}  // namespace nmt::tracker::api
