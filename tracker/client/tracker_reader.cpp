#include "tracker/client/tracker_reader.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>

#include "tracker/api/limits.h"
#include "tracker/api/routes.h"
#include "tracker/api/wire_json.h"
#include "tracker/api/wire_text.h"
#include "tracker/client/http_client.h"

namespace nmt::tracker {
namespace {

using nlohmann::json;

std::string run_arg(std::int64_t run_id) {
  return std::to_string(run_id);
}

// The daemon's error answer as a TrackerError naming the daemon and the request.
TrackerError refusal(const std::string& url, const std::string& method, const std::string& target,
                     const HttpResponse& response) {
  const json answer = json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  std::string message = response.body.substr(0, 300);
  std::optional<std::string> field;
  if (answer.is_object()) {
    try {
      auto error = api::parse<api::ErrorAnswer>(answer);
      message = error.error;
      field = std::move(error.field);
    } catch (const nmt::FieldError&) {
      // Not the daemon's error shape (a proxy's page?): the raw text says more.
    }
  }
  return TrackerError(fmt::format("nmt-trackerd at {}: {} {}: {} {}", url, method, target,
                                  response.status, message),
                      response.status, std::move(field));
}

std::string lower_case(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// The snapshot's size and schema version from the backup answer's header fields (lower case).
std::optional<api::BackupInfo> backup_info(const std::map<std::string, std::string>& fields) {
  const auto length = fields.find("content-length");
  const auto version = fields.find(lower_case(api::kBackupSchemaVersionField));
  if (length == fields.end() || version == fields.end()) return std::nullopt;
  try {
    return api::BackupInfo{std::stoull(length->second), std::stoi(version->second)};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace

TrackerReader::TrackerReader(DaemonAddress address, std::chrono::milliseconds timeout)
    : url_(parse_url(address.url).to_string()),
      http_(std::make_unique<HttpClient>(parse_url(address.url), address.token, timeout,
                                         address.ca_file)) {}

TrackerReader::~TrackerReader() = default;

template <class T>
T TrackerReader::call(const std::string& method, const std::string& target,
                      const std::string& body) {
  HttpResponse response;
  try {
    response = http_->request(method, target, body);
  } catch (const TlsError& e) {
    throw TrackerUnreachable(fmt::format("cannot reach nmt-trackerd at {}: {}", url_, e.what()));
  } catch (const HttpError& e) {
    throw TrackerUnreachable(
        fmt::format("cannot reach nmt-trackerd at {}: {} (is it running?)", url_, e.what()));
  }
  if (response.status != 200) throw refusal(url_, method, target, response);
  const json answer = json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (answer.is_discarded()) {
    throw TrackerError(
        fmt::format("nmt-trackerd at {}: {} {}: the answer is not JSON", url_, method, target),
        response.status, std::nullopt);
  }
  try {
    return api::parse<T>(answer);
  } catch (const nmt::FieldError& e) {
    throw TrackerError(fmt::format("nmt-trackerd at {}: {} {}: malformed answer: {}", url_, method,
                                   target, e.what()),
                       response.status, e.field());
  }
}

api::Health TrackerReader::health() {
  return call<api::Health>("GET", api::route_path(api::RouteId::kHealth));
}

std::vector<api::RunSummary> TrackerReader::list_runs(const api::RunQuery& query) {
  const std::string target =
      api::route_path(api::RouteId::kListRuns) + api::query_string(api::to_query(query));
  return call<api::RunList>("GET", target).runs;
}

api::RunDetail TrackerReader::get_run(std::int64_t run_id) {
  return call<api::RunDetail>("GET", api::route_path(api::RouteId::kGetRun, {run_arg(run_id)}));
}

std::vector<api::RunSummary> TrackerReader::find_runs_by_name(const std::string& name) {
  api::RunQuery query;
  query.name = name;
  return list_runs(query);
}

std::vector<api::SeriesPoint> TrackerReader::all_points(std::int64_t run_id,
                                                        const std::string& key) {
  std::vector<api::SeriesPoint> points;
  std::int64_t after = std::numeric_limits<std::int64_t>::min();
  for (;;) {
    // The daemon answers at most its --max-response-points per page, whatever is asked.
    const api::MetricSeries page = metric_series(run_id, key, std::nullopt, std::nullopt, after);
    if (page.points.empty()) return points;
    after = page.points.back().step;
    points.insert(points.end(), page.points.begin(), page.points.end());
    if (page.last && after >= page.last->step) return points;
  }
}

api::MetricSeries TrackerReader::metric_series(std::int64_t run_id, const std::string& key,
                                               std::optional<std::int64_t> max_points,
                                               std::optional<std::int64_t> rank,
                                               std::optional<std::int64_t> after_step) {
  std::vector<std::pair<std::string, std::string>> query = {{"key", key}};
  if (max_points) query.emplace_back("max_points", std::to_string(*max_points));
  if (rank) query.emplace_back("rank", std::to_string(*rank));
  if (after_step) query.emplace_back("after_step", std::to_string(*after_step));
  const std::string target =
      api::route_path(api::RouteId::kMetricSeries, {run_arg(run_id)}) + api::query_string(query);
  return call<api::MetricSeries>("GET", target);
}

api::SeriesList TrackerReader::series_of_runs(const api::SeriesQuery& query) {
  api::SeriesList all;
  for (std::size_t first = 0; first < query.runs.size(); first += api::kMaxSeriesRuns) {
    api::SeriesQuery part = query;
    const auto begin = query.runs.begin() + static_cast<std::ptrdiff_t>(first);
    part.runs.assign(begin, begin + static_cast<std::ptrdiff_t>(
                                        std::min(api::kMaxSeriesRuns, query.runs.size() - first)));
    const std::string target =
        api::route_path(api::RouteId::kSeriesOfRuns) + api::query_string(api::to_query(part));
    api::SeriesList answer = call<api::SeriesList>("GET", target);
    all.max_points = first == 0 ? answer.max_points : std::min(all.max_points, answer.max_points);
    for (api::RunSeries& s : answer.series) all.series.push_back(std::move(s));
  }
  return all;
}

std::vector<api::SweepSummary> TrackerReader::sweeps() {
  return call<api::SweepList>("GET", api::route_path(api::RouteId::kListSweeps)).sweeps;
}

api::SweepTable TrackerReader::sweep_table(const std::string& sweep) {
  return call<api::SweepTable>("GET", api::route_path(api::RouteId::kSweepTable, {sweep}));
}

api::StatusAnswer TrackerReader::set_status(std::int64_t run_id, const std::string& status) {
  const api::RouteId id = api::RouteId::kSetStatus;
  return call<api::StatusAnswer>(api::route(id).method, api::route_path(id, {run_arg(run_id)}),
                                 api::wire_text(api::StatusUpdate{status, std::nullopt}));
}

api::DeleteAnswer TrackerReader::delete_run(std::int64_t run_id) {
  const api::RouteId id = api::RouteId::kDeleteRun;
  return call<api::DeleteAnswer>(api::route(id).method, api::route_path(id, {run_arg(run_id)}));
}

api::DeleteAnswer TrackerReader::restore_run(std::int64_t run_id) {
  const api::RouteId id = api::RouteId::kRestoreRun;
  return call<api::DeleteAnswer>(api::route(id).method, api::route_path(id, {run_arg(run_id)}));
}

api::EvalCreated TrackerReader::log_eval(std::int64_t run_id, const api::EvalRecord& record) {
  const api::RouteId id = api::RouteId::kLogEval;
  return call<api::EvalCreated>(api::route(id).method, api::route_path(id, {run_arg(run_id)}),
                                api::wire_text(record));
}

api::ArtifactCreated TrackerReader::log_artifact(std::int64_t run_id,
                                                 const api::ArtifactRecord& record) {
  const api::RouteId id = api::RouteId::kLogArtifact;
  return call<api::ArtifactCreated>(api::route(id).method, api::route_path(id, {run_arg(run_id)}),
                                    api::wire_text(record));
}

api::BackupInfo TrackerReader::backup(const std::function<void(const api::BackupInfo&)>& begin,
                                      const std::function<void(const char*, std::size_t)>& write,
                                      std::chrono::milliseconds snapshot_wait) {
  const std::string target = api::route_path(api::RouteId::kBackup);
  std::optional<api::BackupInfo> info;
  std::uint64_t received = 0;
  BodySink sink;
  sink.header = [&](const std::map<std::string, std::string>& fields) {
    info = backup_info(fields);
    if (!info) {
      throw TrackerError(fmt::format("nmt-trackerd at {}: GET {}: malformed answer: no {} or "
                                     "Content-Length (is the daemon older than the backup route?)",
                                     url_, target, api::kBackupSchemaVersionField),
                         200, std::nullopt);
    }
    begin(*info);
  };
  sink.data = [&](const char* data, std::size_t size) {
    received += size;
    write(data, size);
  };
  HttpResponse response;
  try {
    response = http_->get_streamed(target, snapshot_wait, sink);
  } catch (const TlsError& e) {
    throw TrackerUnreachable(fmt::format("cannot reach nmt-trackerd at {}: {}", url_, e.what()));
  } catch (const HttpError& e) {
    if (!info) {
      throw TrackerUnreachable(
          fmt::format("cannot reach nmt-trackerd at {}: {} (is it running?)", url_, e.what()));
    }
    throw TrackerError(fmt::format("nmt-trackerd at {}: GET {}: the answer broke off after {} of "
                                   "{} bytes: {}",
                                   url_, target, received, info->size, e.what()),
                       200, std::nullopt);
  }
  if (response.status != 200) throw refusal(url_, "GET", target, response);
  return *info;
}

}  // namespace nmt::tracker
