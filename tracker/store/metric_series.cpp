// RunStore's metric series: the points of one key, downsampled in SQL to equal-width step buckets
// when asked for fewer than stored, with the newest point exactly. Values are always bound.

#include <fmt/format.h>

#include "tracker/store/run_store.h"
#include "tracker/store/sql_rows.h"

namespace nmt::tracker {

// MAX(step) is one seek in metrics_series(run_id, key, step), unique: one row per step is read.
std::optional<api::LastPoint> RunStore::last_point(std::int64_t run_id, const std::string& key,
                                                   std::optional<std::int64_t> rank) {
  SQLite::Statement& query = rank ? last_point_of_rank_ : last_point_;
  ResetOnExit reset(query);
  query.bind(1, run_id);
  query.bind(2, key);
  if (rank) query.bind(3, *rank);
  if (!query.executeStep()) return std::nullopt;
  return api::LastPoint{query.getColumn(0).getInt64(), query.getColumn(1).getDouble(),
                        query.getColumn(2).getInt64(), query.getColumn(3).getDouble()};
}

api::MetricSeries RunStore::metric_series(std::int64_t run_id, const std::string& key,
                                          std::optional<std::int64_t> max_points,
                                          std::optional<std::int64_t> rank,
                                          std::optional<std::int64_t> after_step) {
  if (key.empty()) {
    throw std::invalid_argument("key must not be empty");
  }
  if (max_points && *max_points < 1) {
    throw std::invalid_argument(fmt::format("max_points must be at least 1, not {}", *max_points));
  }
  require_run(run_id);
  const std::string where =
      std::string(" FROM metrics WHERE run_id = ? AND key = ?") + (rank ? " AND rank = ?" : "");
  const auto bind_where = [&](SQLite::Statement& statement) {
    statement.bind(1, run_id);
    statement.bind(2, key);
    if (rank) {
      statement.bind(3, *rank);
    }
  };
  const int next_index = rank ? 4 : 3;
  SQLite::Statement range(sql_, "SELECT COUNT(*), MIN(step), MAX(step)" + where);
  bind_where(range);
  range.executeStep();
  api::MetricSeries series;
  series.key = key;
  series.total_points = range.getColumn(0).getInt64();
  series.last = last_point(run_id, key, rank);
  series.downsampled = !after_step && max_points && series.total_points > *max_points;
  std::string select;
  if (after_step) {
    select = "SELECT step, value, value, value, rank, wall_time" + where +
             " AND step > ? ORDER BY step, rank, rowid" + (max_points ? " LIMIT ?" : "");
  } else if (!series.downsampled) {
    select =
        "SELECT step, value, value, value, rank, wall_time" + where + " ORDER BY step, rank, rowid";
  } else {
    // Equal-width step buckets; width = ceil(span / max_points) keeps the bucket count in bounds.
    select =
        "SELECT MIN(step), AVG(value), MIN(value), MAX(value), "
        "CASE WHEN MIN(rank) = MAX(rank) THEN MIN(rank) END, MAX(wall_time)" +
        where + " GROUP BY (step - ?) / ? ORDER BY 1";
  }
  SQLite::Statement points(sql_, select);
  bind_where(points);
  if (after_step) {
    points.bind(next_index, *after_step);
    if (max_points) points.bind(next_index + 1, *max_points);
  } else if (series.downsampled) {
    const std::int64_t first = range.getColumn(1).getInt64();
    const std::int64_t span = range.getColumn(2).getInt64() - first + 1;
    points.bind(next_index, first);
    points.bind(next_index + 1, (span + *max_points - 1) / *max_points);
  }
  while (points.executeStep()) {
    series.points.push_back(
        api::SeriesPoint{points.getColumn(0).getInt64(), points.getColumn(1).getDouble(),
                         points.getColumn(2).getDouble(), points.getColumn(3).getDouble(),
                         optional_integer(points.getColumn(4)), points.getColumn(5).getDouble()});
  }
  return series;
}

}  // namespace nmt::tracker
