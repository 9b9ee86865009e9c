// RequestHandler: tracker/API.md route by route. Bodies are parsed and checked before the store
// lock is taken, so one bad or slow request never holds up the writer; every 4xx names the field.

#include "tracker/server/request_handler.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <utility>

#include "tracker/server/request_fields.h"

namespace nmt::tracker {
namespace {

using handler::bad_field;
using handler::Fields;
using handler::HttpError;
using nlohmann::json;

Response json_response(int status, const json& body) {
  // replace: a stray invalid UTF-8 byte must not turn an answer into an exception.
  return Response{status, body.dump(-1, ' ', false, json::error_handler_t::replace)};
}

Response error_response(int status, const std::string& message, const std::string& field = {}) {
  json body = {{"error", message}};
  if (!field.empty()) {
    body["field"] = field;
  }
  return json_response(status, body);
}

// `allowed` lists the route's methods, e.g. "GET, POST"; matched by whole names.
void require_method(const Request& request, const std::string& allowed) {
  if (request.method.empty() ||
      (", " + allowed + ", ").find(", " + request.method + ", ") == std::string::npos) {
    throw HttpError(405, fmt::format("method {} is not allowed on {}; use {}", request.method,
                                     request.path, allowed));
  }
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

bool starts_with(std::string_view text, std::string_view prefix) {
  return text.substr(0, prefix.size()) == prefix;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

}  // namespace

void HandlerOptions::validate() const {
  if (json.max_depth == 0) throw std::invalid_argument("json.max_depth must be at least 1");
  if (json.max_elements == 0) throw std::invalid_argument("json.max_elements must be at least 1");
  if (max_response_points < 1) {
    throw std::invalid_argument("max_response_points must be at least 1");
  }
}

RequestHandler::RequestHandler(RunStore& store, std::string token, HandlerOptions options,
                               RunStore* reader)
    : store_(store),
      reader_(reader),
      token_(std::move(token)),
      options_(options),
      schema_version_(store.schema_version()) {
  options_.validate();
}

std::optional<Response> RequestHandler::check_header(const Request& request) const {
  if (token_.empty() || request.path == "/api/health" || authorized(request.authorization)) {
    return std::nullopt;
  }
  return error_response(401, "missing or bad bearer token (send 'Authorization: Bearer <token>')");
}

json RequestHandler::parse_body(const Request& request) const {
  return handler::parse_json_body(request.body, options_.json);
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
    if (auto refused = check_header(request)) {
      return *refused;
    }
    return route(request);
  } catch (const HttpError& e) {
    return error_response(e.status(), e.what(), e.field());
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

// Compares in time independent of where the token differs, so it cannot be guessed bytewise.
bool RequestHandler::authorized(const std::string& authorization) const {
  const std::string_view scheme = "Bearer ";
  if (authorization.size() != scheme.size() + token_.size() ||
      !starts_with(authorization, scheme)) {
    return false;
  }
  unsigned char difference = 0;
  for (std::size_t i = 0; i < token_.size(); ++i) {
    difference |= static_cast<unsigned char>(authorization[scheme.size() + i] ^ token_[i]);
  }
  return difference == 0;
}

Response RequestHandler::route(const Request& request) {
  const std::string& path = request.path;
  if (path == "/api/health") {
    require_method(request, "GET");
    return health();
  }
  if (path == "/api/runs") {
    require_method(request, "GET, POST");
    return request.method == "GET" ? list_runs(request) : create_run(request);
  }
  const std::string_view sweeps = "/api/sweeps/", table = "/table";
  if (starts_with(path, sweeps) && ends_with(path, table) &&
      path.size() > sweeps.size() + table.size()) {
    require_method(request, "GET");
    return sweep_table(path.substr(sweeps.size(), path.size() - sweeps.size() - table.size()));
  }
  if (starts_with(path, "/api/runs/")) {
    return route_run(request, path.substr(std::string_view("/api/runs/").size()));
  }
  throw HttpError(404, fmt::format("unknown route {}", path));
}

// `rest` is what follows /api/runs/: "{id}" or "{id}/{action}".
Response RequestHandler::route_run(const Request& request, const std::string& rest) {
  const std::size_t slash = rest.find('/');
  const std::string id_text = rest.substr(0, slash);
  const std::string action = slash == std::string::npos ? "" : rest.substr(slash + 1);
  static const std::map<std::string, const char*> kMethods = {{"", "GET"},
                                                              {"status", "PUT"},
                                                              {"metrics", "GET, POST"},
                                                              {"evals", "POST"},
                                                              {"artifacts", "POST"}};
  const auto methods = kMethods.find(action);
  if (methods == kMethods.end()) {
    throw HttpError(404, fmt::format("unknown route {}", request.path));
  }
  require_method(request, methods->second);
  const auto run_id = parse_integer(id_text);
  if (!run_id) {
    throw HttpError(404, fmt::format("unknown run '{}': run ids are integers", id_text));
  }
  if (action.empty()) {
    return get_run(*run_id);
  }
  if (action == "status") {
    return set_status(*run_id, request);
  }
  if (action == "metrics") {
    return request.method == "GET" ? metric_series(*run_id, request)
                                   : ingest_metrics(*run_id, request);
  }
  return action == "evals" ? log_eval(*run_id, request) : log_artifact(*run_id, request);
}

Response RequestHandler::health() {
  return json_response(200, {{"status", "ok"}, {"schema_version", schema_version_}});
}

Response RequestHandler::create_run(const Request& request) {
  const json body = parse_body(request);
  const Fields fields(body);
  RunSpec spec;
  spec.experiment = fields.text("experiment");
  spec.name = fields.text("name");
  spec.uid = fields.optional_text("uid");
  if (spec.uid && !RunStore::is_valid_uid(*spec.uid)) {
    bad_field("uid", RunStore::kUidRule);
  }
  spec.attempt = fields.optional_integer("attempt").value_or(1);
  if (spec.attempt < 1) {
    bad_field("attempt", "must be an integer of at least 1");
  }
  spec.sweep = fields.optional_text("sweep");
  spec.row_label = fields.optional_text("row_label");
  spec.row_index = fields.optional_integer("row_index");
  spec.config = fields.optional_text("config");
  spec.config_hash = fields.optional_text("config_hash");
  spec.git_revision = fields.optional_text("git_revision");
  spec.host = fields.optional_text("host");
  spec.world_size = fields.optional_integer("world_size");
  if (spec.world_size && *spec.world_size < 1) {
    bad_field("world_size", "must be an integer of at least 1");
  }
  spec.slurm_job_id = fields.optional_text("slurm_job_id");
  spec.slurm_array_id = fields.optional_text("slurm_array_id");
  if (const auto params = body.find("params"); params != body.end() && !params->is_null()) {
    if (!params->is_object()) {
      bad_field("params", "must be an object of flat key: value pairs");
    }
    for (const auto& [key, value] : params->items()) {
      if (key.empty()) {
        bad_field("params", "must not have an empty key");
      }
      if (!value.is_number() && !value.is_string() && !value.is_boolean()) {
        bad_field("params." + key, "must be a number, string or bool");
      }
    }
    spec.params = *params;
  }
  const RunHandle run =
      with_store([&](RunStore& store) { return store.create_or_resume_run(spec); });
  return json_response(
      200, {{"run_id", run.run_id}, {"attempt", run.attempt}, {"resumed", run.resumed}});
}

Response RequestHandler::list_runs(const Request& request) {
  RunFilter filter;
  for (const auto& [name, value] : request.query) {
    if (name == "experiment") {
      filter.experiment = value;
    } else if (name == "sweep") {
      filter.sweep = value;
    } else if (name == "status") {
      filter.status = value;
    } else if (name == "uid") {
      filter.uid = value;
    } else if (starts_with(name, "param.") && name.size() > 6) {
      filter.params[name.substr(6)] = value;
    } else {
      throw HttpError(400, fmt::format("unknown query parameter '{}'", name), name);
    }
  }
  json runs = with_reader([&](RunStore& store) { return store.list_runs(filter); });
  return json_response(200, {{"runs", std::move(runs)}});
}

Response RequestHandler::get_run(std::int64_t run_id) {
  return json_response(200, with_reader([&](RunStore& store) { return store.get_run(run_id); }));
}

Response RequestHandler::set_status(std::int64_t run_id, const Request& request) {
  const json body = parse_body(request);
  const Fields fields(body);
  const std::string status = fields.text("status");
  if (!RunStore::is_valid_status(status)) {
    bad_field("status", "must be one of running, finished, failed, killed, preempted");
  }
  const auto attempt = fields.optional_integer("attempt");
  if (attempt && *attempt < 1) {
    bad_field("attempt", "must be an integer of at least 1");
  }
  with_store([&](RunStore& store) {
    store.set_status(run_id, status, attempt);
    return 0;
  });
  return json_response(200, {{"run_id", run_id}, {"status", status}});
}

Response RequestHandler::ingest_metrics(std::int64_t run_id, const Request& request) {
  const json body = parse_body(request);
  const Fields fields(body);
  const std::int64_t rank = fields.integer("rank");
  if (rank < 0) {
    bad_field("rank", "must be an integer of at least 0");
  }
  const std::int64_t sequence = fields.integer("sequence");
  const json& points_json = fields.array("points");
  std::vector<MetricPoint> points;
  points.reserve(points_json.size());
  for (std::size_t i = 0; i < points_json.size(); ++i) {
    const auto index = static_cast<std::ptrdiff_t>(i);
    if (!points_json[i].is_object()) {
      bad_field(fmt::format("points[{}]", i), "must be an object");
    }
    const Fields point(points_json[i], "points", index);
    points.push_back(MetricPoint{point.text("key"), point.integer("step"), point.number("value"),
                                 point.optional_number("time")});
  }
  const IngestResult result = with_store(
      [&](RunStore& store) { return store.ingest_metrics(run_id, rank, sequence, points); });
  return json_response(200, {{"stored", result.stored}, {"duplicate", result.duplicate}});
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
  // The answer is bounded whatever is asked: a 1M-point series was an 83 MB answer. The store
  // says in the answer whether it downsampled and how many points there are.
  const std::int64_t max_points =
      std::min(asked.value_or(options_.max_response_points), options_.max_response_points);
  const auto rank = query_integer(request, "rank");
  return json_response(200, with_reader([&](RunStore& store) {
                         return store.metric_series(run_id, key->second, max_points, rank);
                       }));
}

Response RequestHandler::log_eval(std::int64_t run_id, const Request& request) {
  const json body = parse_body(request);
  const Fields fields(body);
  const EvalRecord eval{fields.text("split"),
                        fields.optional_integer("step"),
                        fields.optional_text("checkpoint"),
                        fields.optional_number("bleu"),
                        fields.optional_number("chrf"),
                        fields.optional_number("perplexity"),
                        fields.optional_text("signature")};
  const std::int64_t id = with_store([&](RunStore& store) { return store.log_eval(run_id, eval); });
  return json_response(200, {{"eval_id", id}});
}

Response RequestHandler::log_artifact(std::int64_t run_id, const Request& request) {
  const json body = parse_body(request);
  const Fields fields(body);
  const ArtifactRecord artifact{fields.text("kind"), fields.text("path"),
                                fields.optional_integer("step"),
                                fields.optional_integer("averaged_from")};
  if (artifact.averaged_from && *artifact.averaged_from < 1) {
    bad_field("averaged_from", "must be an integer of at least 1");
  }
  const std::int64_t id =
      with_store([&](RunStore& store) { return store.log_artifact(run_id, artifact); });
  return json_response(200, {{"artifact_id", id}});
}

Response RequestHandler::sweep_table(const std::string& sweep) {
  return json_response(200, with_reader([&](RunStore& store) { return store.sweep_table(sweep); }));
}

}  // namespace nmt::tracker
