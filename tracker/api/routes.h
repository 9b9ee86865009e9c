#pragma once
// The table of the daemon's routes (tracker/API.md): method and path pattern -> route id, with
// path parameters ("/api/runs/{run}/metrics"). The handler matches requests against it; clients
// build their paths from it, so a path is spelled in one place.

#include <map>
#include <string>
#include <vector>

namespace nmt::tracker::api {

enum class RouteId {
  kHealth,           // GET  /api/health
  kListRuns,         // GET  /api/runs
  kCreateRun,        // POST /api/runs
  kGetRun,           // GET  /api/runs/{run}
  kDeleteRun,        // DELETE /api/runs/{run}
  kRestoreRun,       // POST /api/runs/{run}/restore
  kSetStatus,        // PUT  /api/runs/{run}/status
  kHeartbeat,        // POST /api/runs/{run}/heartbeat
  kIngestMetrics,    // POST /api/runs/{run}/metrics
  kMetricSeries,     // GET  /api/runs/{run}/metrics
  kSeriesOfRuns,     // GET  /api/series
  kLogEval,          // POST /api/runs/{run}/evals
  kLogArtifact,      // POST /api/runs/{run}/artifacts
  kArtifactContent,  // GET /api/runs/{run}/artifacts/{artifact}/content
  kListSweeps,       // GET  /api/sweeps
  kSweepTable,       // GET  /api/sweeps/{sweep}/table
  kBackup,           // GET  /api/backup
};

struct Route {
  RouteId id;
  const char* method;   // "GET", "POST", "PUT", "DELETE"
  const char* pattern;  // '/'-separated; a "{name}" segment matches any one non-empty segment
};

// Every route, in the order of tracker/API.md's table.
const std::vector<Route>& routes();
const Route& route(RouteId id);

struct RouteMatch {
  enum class Outcome { kFound, kWrongMethod, kNotFound };
  Outcome outcome = Outcome::kNotFound;
  RouteId id = RouteId::kHealth;            // when found
  std::map<std::string, std::string> args;  // path parameters by name, when found
  std::string allowed;                      // "GET, POST": the path's methods, when kWrongMethod
};

// The route of `method` and a percent-decoded `path`.
RouteMatch match_route(const std::string& method, const std::string& path);

// The percent-encoded path of `id`, its "{name}" segments filled with `args` in order. Throws
// std::invalid_argument when the count of args differs from the route's parameters.
std::string route_path(RouteId id, const std::vector<std::string>& args = {});

// Percent-encodes everything but RFC 3986's unreserved characters.
std::string percent_encode(const std::string& text);

// "?k=v&k2=v2", percent-encoded; "" when `query` is empty.
std::string query_string(const std::vector<std::pair<std::string, std::string>>& query);

}  // namespace nmt::tracker::api
