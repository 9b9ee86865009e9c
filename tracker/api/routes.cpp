#include "tracker/api/routes.h"

#include <fmt/format.h>

#include <cctype>
#include <stdexcept>
#include <string_view>

namespace nmt::tracker::api {
namespace {

std::vector<std::string_view> segments(std::string_view path) {
  std::vector<std::string_view> out;
  std::size_t start = 1;  // past the leading '/'
  while (start <= path.size()) {
    const std::size_t slash = path.find('/', start);
    const std::size_t end = slash == std::string_view::npos ? path.size() : slash;
    out.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool is_parameter(std::string_view segment) {
  return segment.size() > 2 && segment.front() == '{' && segment.back() == '}';
}

// The path parameters when `path` fits `pattern`.
bool fits(std::string_view pattern, std::string_view path,
          std::map<std::string, std::string>& args) {
  if (path.empty() || path.front() != '/') return false;
  const auto want = segments(pattern), have = segments(path);
  if (want.size() != have.size()) return false;
  std::map<std::string, std::string> found;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (is_parameter(want[i])) {
      if (have[i].empty()) return false;
      found[std::string(want[i].substr(1, want[i].size() - 2))] = std::string(have[i]);
    } else if (want[i] != have[i]) {
      return false;
    }
  }
  args = std::move(found);
  return true;
}

}  // namespace

const std::vector<Route>& routes() {
  static const std::vector<Route> kRoutes = {
      {RouteId::kHealth, "GET", "/api/health"},
      {RouteId::kCreateRun, "POST", "/api/runs"},
      {RouteId::kSetStatus, "PUT", "/api/runs/{run}/status"},
      {RouteId::kHeartbeat, "POST", "/api/runs/{run}/heartbeat"},
      {RouteId::kIngestMetrics, "POST", "/api/runs/{run}/metrics"},
      {RouteId::kLogEval, "POST", "/api/runs/{run}/evals"},
      {RouteId::kLogArtifact, "POST", "/api/runs/{run}/artifacts"},
      {RouteId::kListRuns, "GET", "/api/runs"},
      {RouteId::kGetRun, "GET", "/api/runs/{run}"},
      {RouteId::kDeleteRun, "DELETE", "/api/runs/{run}"},
      {RouteId::kRestoreRun, "POST", "/api/runs/{run}/restore"},
      {RouteId::kMetricSeries, "GET", "/api/runs/{run}/metrics"},
      {RouteId::kSeriesOfRuns, "GET", "/api/series"},
      {RouteId::kArtifactContent, "GET", "/api/runs/{run}/artifacts/{artifact}/content"},
      {RouteId::kListSweeps, "GET", "/api/sweeps"},
      {RouteId::kSweepTable, "GET", "/api/sweeps/{sweep}/table"},
      {RouteId::kBackup, "GET", "/api/backup"},
  };
  return kRoutes;
}

const Route& route(RouteId id) {
  for (const Route& r : routes()) {
    if (r.id == id) return r;
  }
  throw std::logic_error("route id missing from the route table");
}

RouteMatch match_route(const std::string& method, const std::string& path) {
  RouteMatch result;
  for (const Route& r : routes()) {
    std::map<std::string, std::string> args;
    if (!fits(r.pattern, path, args)) continue;
    if (r.method == method) {
      result.outcome = RouteMatch::Outcome::kFound;
      result.id = r.id;
      result.args = std::move(args);
      return result;
    }
    result.outcome = RouteMatch::Outcome::kWrongMethod;
    result.allowed += (result.allowed.empty() ? "" : ", ") + std::string(r.method);
  }
  return result;
}

std::string route_path(RouteId id, const std::vector<std::string>& args) {
  const Route& r = route(id);
  std::string out;
  std::size_t used = 0;
  for (const std::string_view segment : segments(r.pattern)) {
    out += '/';
    if (!is_parameter(segment)) {
      out += segment;
    } else if (used < args.size()) {
      out += percent_encode(args[used++]);
    } else {
      throw std::invalid_argument(
          fmt::format("route {} needs more than {} path arguments", r.pattern, args.size()));
    }
  }
  if (used != args.size()) {
    throw std::invalid_argument(
        fmt::format("route {} takes {} path arguments, not {}", r.pattern, used, args.size()));
  }
  return out;
}

std::string percent_encode(const std::string& text) {
  std::string out;
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += c;
    } else {
      out += fmt::format("%{:02X}", u);
    }
  }
  return out;
}

std::string query_string(const std::vector<std::pair<std::string, std::string>>& query) {
  std::string out;
  for (const auto& [key, value] : query) {
    out += (out.empty() ? "?" : "&") + percent_encode(key) + "=" + percent_encode(value);
  }
  return out;
}

}  // namespace nmt::tracker::api
