// Fuzz harness: JSON text read as every wire type of the tracker's protocol
// (tracker/api/wire_json.h), as the daemon reads request bodies (under the handler's JSON limits,
// tracker/server/json_body.h) and the read client reads answers. Expected: a parse error or a
// FieldError naming the field. Checked: a value read writes back as JSON that reads again (what
// one side writes, the other side accepts).

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "common/json_fields.h"
#include "fuzz/fuzz_input.h"
#include "tracker/api/wire_json.h"
#include "tracker/server/http_error.h"
#include "tracker/server/json_body.h"

namespace {

namespace api = nmt::tracker::api;

template <class T>
void read_as(const nlohmann::json& value, const char* type) {
  T out;
  try {
    out = api::parse<T>(value);
  } catch (const nmt::FieldError&) {
    return;
  }
  const nlohmann::json written = out;
  try {
    (void)api::parse<T>(written);
  } catch (const std::exception& e) {
    nmt::fuzz::finding(std::string(type) + " read from " + value.dump() + " writes " +
                       written.dump() + ", which does not read back: " + e.what());
  }
}

void read_as_every_type(const nlohmann::json& value) {
  read_as<api::RunRegistration>(value, "RunRegistration");
  read_as<api::StatusUpdate>(value, "StatusUpdate");
  read_as<api::MetricPoint>(value, "MetricPoint");
  read_as<api::MetricBatch>(value, "MetricBatch");
  read_as<api::EvalRecord>(value, "EvalRecord");
  read_as<api::ArtifactRecord>(value, "ArtifactRecord");
  read_as<api::RunCreated>(value, "RunCreated");
  read_as<api::StatusAnswer>(value, "StatusAnswer");
  read_as<api::IngestAnswer>(value, "IngestAnswer");
  read_as<api::EvalCreated>(value, "EvalCreated");
  read_as<api::ArtifactCreated>(value, "ArtifactCreated");
  read_as<api::DeleteAnswer>(value, "DeleteAnswer");
  read_as<api::Health>(value, "Health");
  read_as<api::ErrorAnswer>(value, "ErrorAnswer");
  read_as<api::RunSummary>(value, "RunSummary");
  read_as<api::RunList>(value, "RunList");
  read_as<api::Attempt>(value, "Attempt");
  read_as<api::Eval>(value, "Eval");
  read_as<api::Artifact>(value, "Artifact");
  read_as<api::RunDetail>(value, "RunDetail");
  read_as<api::SeriesPoint>(value, "SeriesPoint");
  read_as<api::LastPoint>(value, "LastPoint");
  read_as<api::MetricSeries>(value, "MetricSeries");
  read_as<api::RunSeries>(value, "RunSeries");
  read_as<api::SeriesList>(value, "SeriesList");
  read_as<api::SweepSummary>(value, "SweepSummary");
  read_as<api::SweepList>(value, "SweepList");
  read_as<api::SweepColumn>(value, "SweepColumn");
  read_as<api::SweepRow>(value, "SweepRow");
  read_as<api::SweepTable>(value, "SweepTable");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nmt::fuzz::quiet_logs();
  const std::string text(nmt::fuzz::as_text(data, size));
  // The daemon's way: the shape checked before the parse, errors as HTTP errors.
  try {
    nmt::tracker::handler::JsonLimits limits;
    limits.max_depth = 16;
    limits.max_elements = 1000;
    read_as_every_type(nmt::tracker::handler::parse_json_body(text, limits));
  } catch (const nmt::tracker::handler::HttpError&) {
  } catch (const nmt::FieldError&) {  // a number out of range of a double, named by its field
  }
  // The read client's way: the whole answer parsed.
  nlohmann::json value;
  try {
    value = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return 0;
  }
  read_as_every_type(value);
  return 0;
}
