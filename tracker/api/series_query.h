#pragma once
// The query of GET /api/series (tracker/API.md): many metric series in one request, the runs by
// id and the keys by name or "*" (each run's own), each series downsampled as
// GET /api/runs/{run}/metrics downsamples it. The read client turns it into query parameters, the
// handler back; a bad parameter is a FieldError naming it. The limits on one request (runs, series,
// points in all) are in tracker/api/limits.h.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tracker/api/run_query.h"

namespace nmt::tracker::api {

struct SeriesQuery {
  std::vector<std::int64_t> runs;          // distinct, in the order the answer lists them
  KeySelection keys;                       // "*": each run's own keys; else every key of every run
  std::optional<std::int64_t> max_points;  // per series; at least 1
};

// The query parameters of `query`: runs, keys, max_points.
std::vector<std::pair<std::string, std::string>> to_query(const SeriesQuery& query);
// From decoded query parameters; throws FieldError naming the parameter at fault (`runs`, `keys`,
// `max_points`, or an unknown one), also for more runs than kMaxSeriesRuns.
SeriesQuery series_query_from(const std::map<std::string, std::string>& query);

}  // namespace nmt::tracker::api
