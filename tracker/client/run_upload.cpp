#include "tracker/client/run_upload.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <optional>
#include <stdexcept>
#include <thread>

#include "tracker/api/routes.h"
#include "tracker/api/wire_json.h"
#include "tracker/api/wire_text.h"
#include "tracker/client/http_client.h"
#include "tracker/client/spool.h"
#include "tracker/client/tracker_reader.h"

namespace nmt::tracker {
namespace {

using nlohmann::json;

constexpr int kTries = 4;
constexpr std::chrono::milliseconds kFirstPause{250};

api::RouteId route_of(const std::string& kind) {
  if (kind == "metrics") return api::RouteId::kIngestMetrics;
  if (kind == "evals") return api::RouteId::kLogEval;
  if (kind == "artifacts") return api::RouteId::kLogArtifact;
  if (kind == "status") return api::RouteId::kSetStatus;
  throw std::invalid_argument("unknown spool entry kind '" + kind + "'");
}

}  // namespace

RunUploader::RunUploader(const DaemonAddress& address, std::chrono::milliseconds timeout)
    : url_(parse_url(address.url).to_string()),
      http_(std::make_unique<HttpClient>(parse_url(address.url), address.token, timeout,
                                         address.ca_file)) {}

RunUploader::~RunUploader() = default;

json RunUploader::call(const std::string& method, const std::string& target,
                       const std::string& body) {
  auto pause = kFirstPause;
  for (int attempt = 1;; ++attempt) {
    std::string failure;
    try {
      const HttpResponse response = http_->request(method, target, body);
      const json answer = json::parse(response.body, nullptr, /*allow_exceptions=*/false);
      if (response.status == 200) return answer;
      std::string message = response.body.substr(0, 300);
      std::optional<std::string> field;
      if (answer.is_object() && answer.contains("error") && answer["error"].is_string()) {
        message = answer["error"].get<std::string>();
        if (answer.contains("field") && answer["field"].is_string()) {
          field = answer["field"].get<std::string>();
        }
      }
      const std::string what = fmt::format("nmt-trackerd at {}: {} {}: {} {}", url_, method, target,
                                           response.status, message);
      if (response.status < 500 || attempt == kTries) {
        throw TrackerError(what, response.status, field);
      }
      failure = what;
    } catch (const TlsError& e) {
      throw TrackerUnreachable(fmt::format("cannot reach nmt-trackerd at {}: {}", url_, e.what()));
    } catch (const HttpError& e) {
      if (attempt == kTries) {
        throw TrackerUnreachable(
            fmt::format("cannot reach nmt-trackerd at {}: {} (is it running?)", url_, e.what()));
      }
      failure = e.what();
    }
    spdlog::debug("{} {}: {}; trying again", method, target, failure);
    std::this_thread::sleep_for(pause);
    pause *= 2;
  }
}

api::RunCreated RunUploader::register_run(const api::RunRegistration& info) {
  const auto& route = api::route(api::RouteId::kCreateRun);
  return api::parse<api::RunCreated>(
      call(route.method, api::route_path(route.id), api::wire_text(info)));
}

api::IngestAnswer RunUploader::send_metrics(std::int64_t run_id, const api::MetricBatch& batch) {
  const auto& route = api::route(api::RouteId::kIngestMetrics);
  return api::parse<api::IngestAnswer>(call(
      route.method, api::route_path(route.id, {std::to_string(run_id)}), api::wire_text(batch)));
}

api::StatusAnswer RunUploader::set_status(std::int64_t run_id, const api::StatusUpdate& update) {
  const auto& route = api::route(api::RouteId::kSetStatus);
  return api::parse<api::StatusAnswer>(call(
      route.method, api::route_path(route.id, {std::to_string(run_id)}), api::wire_text(update)));
}

json RunUploader::send_spooled(std::int64_t run_id, const SpoolEntry& entry) {
  const auto& route = api::route(route_of(entry.kind));
  return call(route.method, api::route_path(route.id, {std::to_string(run_id)}), entry.body);
}

}  // namespace nmt::tracker
