#include "tracker/server/series_batch.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "common/json_fields.h"
#include "tracker/api/limits.h"

namespace nmt::tracker {

api::SeriesList read_series(RunStore& store, const api::SeriesQuery& query,
                            std::int64_t max_response_points) {
  // With "*" each run's own keys (so every run is looked up first); else every listed key of
  // every run, as the single route answers a key the run lacks: no points.
  std::vector<std::pair<std::int64_t, std::vector<std::string>>> wanted;
  std::size_t count = 0;
  for (const std::int64_t run : query.runs) {
    wanted.emplace_back(run, query.keys.all ? store.series_keys(run) : query.keys.keys);
    count += wanted.back().second.size();
  }
  if (count > api::kMaxSeriesPerRequest) {
    nmt::bad_field("keys", fmt::format("selects {} series of {} runs, over the limit of {} series "
                                       "per request: ask for fewer keys or runs",
                                       count, query.runs.size(), api::kMaxSeriesPerRequest));
  }
  api::SeriesList answer;
  answer.max_points = std::min(query.max_points.value_or(max_response_points), max_response_points);
  if (count > 0) {
    const std::int64_t share =
        api::kSeriesPointsFactor * max_response_points / static_cast<std::int64_t>(count);
    answer.max_points = std::max<std::int64_t>(1, std::min(answer.max_points, share));
  }
  answer.series.reserve(count);
  for (const auto& [run, keys] : wanted) {
    for (const std::string& key : keys) {
      answer.series.push_back(
          api::RunSeries{run, store.metric_series(run, key, answer.max_points, std::nullopt)});
    }
  }
  return answer;
}

}  // namespace nmt::tracker
