// RequestHandler: tracker/API.md route by route. Bodies are parsed and checked before the store
// lock is taken, so one bad or slow request never holds up the writer; every 4xx names the field.

#include "tracker/server/request_handler.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <utility>

#include "tracker/api/artifact_content.h"
#include "tracker/api/run_query.h"
#include "tracker/api/series_query.h"
#include "tracker/api/wire_json.h"
#include "tracker/api/wire_text.h"
#include "tracker/dashboard/dashboard.h"
#include "tracker/server/series_batch.h"
#include "tracker/server/sweep_layout.h"

namespace nmt::tracker {
namespace {

using handler::HttpError;
using nlohmann::json;

Response json_response(int status, const json& body) {
  return Response{status, api::wire_text(body)};
}

Response error_response(int status, const std::string& message, const std::string& field = {}) {
  api::ErrorAnswer answer{message, std::nullopt};
  if (!field.empty()) answer.field = field;
  return json_response(status, answer);
}

Response html_response(int status, std::string body) {
  Response response{status, std::move(body)};
  response.content_type = "text/html; charset=utf-8";
  return response;
}

bool is_api_path(std::string_view path) {
  return path == "/api" || path.substr(0, 5) == "/api/";
}

// A whole decimal number within int64, e.g. a run id or a query integer.
std::optional<std::int64_t> parse_integer(const std::string& text) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [stop, error] = std::from_chars(text.data(), end, value);
  if (text.empty() || error != std::errc() || stop != end) {
    return std::nullopt;
  }
  return value;
}

std::optional<std::int64_t> query_integer(const Request& request, const char* name) {
  const auto it = request.query.find(name);
  if (it == request.query.end()) {
    return std::nullopt;
  }
  const auto value = parse_integer(it->second);
  if (!value) {
    throw HttpError(
        400, fmt::format("query parameter '{}' must be an integer, not '{}'", name, it->second),
        name);
  }
  return value;
}

// Whether a write breaks a per-run limit: `count` is what the run would hold (nullopt: the write
// adds nothing to it). Asked under the store lock just before the write it guards, so nothing else
// writes in between, and a refusal stores nothing.
bool over_limit(std::optional<std::int64_t> count, std::size_t limit) {
  return count && *count > static_cast<std::int64_t>(limit);
}

const char* const kLoginPage =
    "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>nmt-trackerd: token "
    "required</title>\n<link rel=\"icon\" href=\"data:,\"></head>\n<body><h1>This nmt-trackerd "
    "requires its token</h1>\n<p>Open "
    "<code>/?token=TOKEN</code> once, with TOKEN the contents of the daemon's "
    "<code>--token-file</code>; the browser then keeps it in a cookie for this address.</p>"
    "</body></html>\n";

}  // namespace

void HandlerOptions::validate() const {
  if (json.max_depth == 0) throw std::invalid_argument("json.max_depth must be at least 1");
  if (json.max_elements == 0) throw std::invalid_argument("json.max_elements must be at least 1");
  if (max_response_points < 1 || max_response_points > kMaxResponsePoints) {
    throw std::invalid_argument(
        fmt::format("max_response_points must be from 1 to {}", kMaxResponsePoints));
  }
  writes.validate();
}

RequestHandler::RequestHandler(RunStore& store, std::string token, HandlerOptions options,
                               RunStore* reader)
    : store_(store),
      reader_(reader),
      gate_(std::move(token)),
      options_(options),
      schema_version_(store.schema_version()),
      backup_(store.database_path()) {
  options_.validate();
}

HeaderCheck RequestHandler::check_header(const Request& request) const {
  HeaderCheck check;
  check.proven = gate_.admits(request, is_api_path(request.path));
  if (check.proven || request.path == "/api/health") {
    return check;
  }
  if (!is_api_path(request.path)) {
    check.refusal = html_response(401, kLoginPage);
  } else {
    check.refusal = error_response(401,
                                   "missing or bad token (send 'Authorization: Bearer <token>', "
                                   "or the nmt_tracker_token cookie that GET /?token=<token> "
                                   "sets)");
  }
  return check;
}

Response RequestHandler::handle(const Request& request) {
  // The store's own messages say what failed; the request says where (a 500 makes clients retry,
  // so the operator needs to see each one).
  const auto store_failure = [&](const std::string& cause) {
    spdlog::error("store failure on {} {} ({} byte body): {}", request.method, request.path,
                  request.body.size(), cause);
    return error_response(500, fmt::format("store failure: {}", cause));
  };
  try {
    if (auto refused = check_header(request).refusal) {
      return *refused;
    }
    return route(request);
  } catch (const HttpError& e) {
    return error_response(e.status(), e.what(), e.field());
  } catch (const nmt::FieldError& e) {
    return error_response(400, e.what(), e.field());
  } catch (const NotFound& e) {
    return error_response(404, e.what());
  } catch (const Conflict& e) {
    return error_response(409, e.what(), "uid");
  } catch (const std::invalid_argument& e) {
    return error_response(400, e.what());
  } catch (const std::exception& e) {
    return store_failure(e.what());
  } catch (...) {
    return store_failure("unknown exception");
  }
}

Response RequestHandler::route(const Request& request) {
  if (!is_api_path(request.path)) {
    return page(request);
  }
  const api::RouteMatch match = api::match_route(request.method, request.path);
  if (match.outcome == api::RouteMatch::Outcome::kNotFound) {
    throw HttpError(404, fmt::format("unknown route {}", request.path));
  }
  if (match.outcome == api::RouteMatch::Outcome::kWrongMethod) {
    throw HttpError(405, fmt::format("method {} is not allowed on {}; use {}", request.method,
                                     request.path, match.allowed));
  }
  return route_api(request, match);
}

// One case per route of tracker/api/routes.h.
Response RequestHandler::route_api(const Request& request, const api::RouteMatch& match) {
  std::int64_t run_id = 0;
  if (const auto run = match.args.find("run"); run != match.args.end()) {
    const auto id = parse_integer(run->second);
    if (!id) {
      throw HttpError(404, fmt::format("unknown run '{}': run ids are integers", run->second));
    }
    run_id = *id;
  }
  switch (match.id) {
    case api::RouteId::kHealth:
      return health();
    case api::RouteId::kListRuns:
      return list_runs(request);
    case api::RouteId::kCreateRun:
      return create_run(request);
    case api::RouteId::kGetRun:
      return get_run(run_id);
    case api::RouteId::kDeleteRun:
      return set_deleted(run_id, true);
    case api::RouteId::kRestoreRun:
      return set_deleted(run_id, false);
    case api::RouteId::kSetStatus:
      return set_status(run_id, request);
    case api::RouteId::kHeartbeat:
      return heartbeat(run_id, request);
    case api::RouteId::kIngestMetrics:
      return ingest_metrics(run_id, request);
    case api::RouteId::kMetricSeries:
      return metric_series(run_id, request);
    case api::RouteId::kSeriesOfRuns: {
      const api::SeriesQuery query = api::series_query_from(request.query);
      return json_response(200, with_reader([&](RunStore& store) {
                             return read_series(store, query, options_.max_response_points);
                           }));
    }
    case api::RouteId::kLogEval:
      return log_eval(run_id, request);
    case api::RouteId::kLogArtifact:
      return log_artifact(run_id, request);
    case api::RouteId::kArtifactContent:
      return artifact_content(run_id, match.args.at("artifact"));
    case api::RouteId::kListSweeps:
      return list_sweeps();
    case api::RouteId::kSweepTable:
      return sweep_table(match.args.at("sweep"));
    case api::RouteId::kBackup:
      return backup_.answer();
  }
  throw HttpError(404, fmt::format("unknown route {}", request.path));
}

// The dashboard's files; `?token=` (checked by check_header()) is traded for the cookie.
Response RequestHandler::page(const Request& request) {
  if (request.method != "GET") {
    throw HttpError(
        405, fmt::format("method {} is not allowed on {}; use GET", request.method, request.path));
  }
  if (request.query.count("token") != 0) {
    Response redirect{303, ""};
    redirect.content_type = "text/plain";
    redirect.headers.emplace_back("Location", request.path);
    if (!gate_.open()) {
      redirect.headers.emplace_back("Set-Cookie", gate_.login_cookie(options_.secure_cookie));
    }
    return redirect;
  }
  if (auto file = dashboard::serve(request.path)) {
    return std::move(*file);
  }
  throw HttpError(404, fmt::format("unknown page {}", request.path));
}

template <typename T>
T RequestHandler::parse_body(const Request& request) const {
  return api::parse<T>(handler::parse_json_body(request.body, options_.json));
}

Response RequestHandler::health() {
  return json_response(200, api::Health{"ok", schema_version_});
}

Response RequestHandler::create_run(const Request& request) {
  const auto spec = parse_body<api::RunRegistration>(request);
  api::check_limits(spec, options_.writes);
  const RunHandle run = with_store([&](RunStore& store) {
    const auto params = store.param_count_with(spec);
    if (over_limit(params, options_.writes.max_params)) {
      throw HttpError(400,
                      fmt::format("the registration would give the run {} params, over the limit "
                                  "of {} params per run (--max-params)",
                                  *params, options_.writes.max_params),
                      "params");
    }
    return store.create_or_resume_run(spec);
  });
  return json_response(200, run);
}

Response RequestHandler::list_runs(const Request& request) {
  const api::RunQuery query = api::run_query_from(request.query);
  api::RunList runs{with_reader([&](RunStore& store) { return store.list_runs(query); })};
  return json_response(200, runs);
}

Response RequestHandler::get_run(std::int64_t run_id) {
  return json_response(200, with_reader([&](RunStore& store) { return store.get_run(run_id); }));
}

Response RequestHandler::set_deleted(std::int64_t run_id, bool deleted) {
  with_store([&](RunStore& store) {
    store.set_deleted(run_id, deleted);
    return 0;
  });
  return json_response(200, api::DeleteAnswer{run_id, deleted});
}

Response RequestHandler::set_status(std::int64_t run_id, const Request& request) {
  const auto update = parse_body<api::StatusUpdate>(request);
  with_store([&](RunStore& store) {
    store.set_status(run_id, update.status, update.attempt);
    return 0;
  });
  return json_response(200, api::StatusAnswer{run_id, update.status});
}

Response RequestHandler::heartbeat(std::int64_t run_id, const Request& request) {
  const auto beat = parse_body<api::Heartbeat>(request);
  const auto answer =
      with_store([&](RunStore& store) { return store.heartbeat(run_id, beat.attempt); });
  return json_response(200, answer);
}

std::vector<SilentAttempt> RequestHandler::mark_silent_attempts(double silence_s) {
  return with_store([&](RunStore& store) { return store.mark_silent_attempts(silence_s); });
}

Response RequestHandler::ingest_metrics(std::int64_t run_id, const Request& request) {
  const auto batch = parse_body<api::MetricBatch>(request);
  const std::vector<std::string> keys = api::check_limits(batch, options_.writes);
  const auto max_keys = options_.writes.max_metric_keys;
  const IngestResult result = with_store([&](RunStore& store) {
    const auto count =
        store.metric_key_count_with(run_id, keys, static_cast<std::int64_t>(max_keys));
    if (over_limit(count, max_keys)) {
      throw HttpError(400,
                      fmt::format("the batch would give the run {} distinct metric keys, over the "
                                  "limit of {} keys per run (--max-metric-keys); points for the "
                                  "keys it has are still accepted",
                                  *count, max_keys),
                      "points");
    }
    return store.ingest_metrics(run_id, batch.rank, batch.sequence, batch.points);
  });
  return json_response(200, result);
}

Response RequestHandler::metric_series(std::int64_t run_id, const Request& request) {
  const auto key = request.query.find("key");
  if (key == request.query.end() || key->second.empty()) {
    throw HttpError(400, "query parameter 'key' is required", "key");
  }
  const auto asked = query_integer(request, "max_points");
  if (asked && *asked < 1) {
    throw HttpError(400, "query parameter 'max_points' must be at least 1", "max_points");
  }
  // The answer is bounded whatever is asked (a 1M-point series would be about 83 MB). The store
  // says in the answer whether it downsampled and how many points there are.
  const std::int64_t max_points =
      std::min(asked.value_or(options_.max_response_points), options_.max_response_points);
  const auto rank = query_integer(request, "rank");
  const auto after_step = query_integer(request, "after_step");
  return json_response(200, with_reader([&](RunStore& store) {
                         return store.metric_series(run_id, key->second, max_points, rank,
                                                    after_step);
                       }));
}

Response RequestHandler::log_eval(std::int64_t run_id, const Request& request) {
  const auto eval = parse_body<api::EvalRecord>(request);
  api::check_limits(eval, options_.writes);
  const std::int64_t id = with_store([&](RunStore& store) { return store.log_eval(run_id, eval); });
  return json_response(200, api::EvalCreated{id});
}

Response RequestHandler::log_artifact(std::int64_t run_id, const Request& request) {
  const auto artifact = parse_body<api::ArtifactRecord>(request);
  api::check_limits(artifact, options_.writes);
  const std::int64_t id =
      with_store([&](RunStore& store) { return store.log_artifact(run_id, artifact); });
  return json_response(200, api::ArtifactCreated{id});
}

// The artifact's text as the file it is, under headers that keep a browser from running or
// fetching anything in it (api::kArtifactContentSecurityPolicy).
Response RequestHandler::artifact_content(std::int64_t run_id, const std::string& artifact) {
  const auto id = parse_integer(artifact);
  if (!id) {
    throw HttpError(404, fmt::format("unknown artifact '{}': artifact ids are integers", artifact));
  }
  const ArtifactContent found =
      with_reader([&](RunStore& store) { return store.artifact_content(run_id, *id); });
  const auto type = api::artifact_content_type(found.path);
  if (!found.content || !type) {
    throw HttpError(404, fmt::format("artifact {} of run {} ({}) was recorded without its content",
                                     *id, run_id, found.path));
  }
  Response response{200, *found.content, *type};
  response.headers.emplace_back("X-Content-Type-Options", "nosniff");
  response.headers.emplace_back("Content-Security-Policy", api::kArtifactContentSecurityPolicy);
  return response;
}

Response RequestHandler::list_sweeps() {
  api::SweepList sweeps{with_reader([](RunStore& store) { return store.list_sweeps(); })};
  return json_response(200, sweeps);
}

Response RequestHandler::sweep_table(const std::string& sweep) {
  const auto runs = with_reader([&](RunStore& store) { return store.sweep_runs(sweep); });
  return json_response(200, tracker::sweep_table(sweep, runs));
}

}  // namespace nmt::tracker
