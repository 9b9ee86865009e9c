// RunStore's metric series: the points of one key, downsampled to equal-width step buckets when
// asked for fewer than stored (in one pass over the index in step order: no sort), with the
// newest point exactly. Values are always bound.

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "tracker/store/run_store.h"
#include "tracker/store/sql_rows.h"

namespace nmt::tracker {
namespace {

// step - first for first <= step, exact in unsigned arithmetic for any two int64 steps.
std::uint64_t step_offset(std::int64_t first, std::int64_t step) {
  return static_cast<std::uint64_t>(step) - static_cast<std::uint64_t>(first);
}

// A stored point as a series answers it: one point per step, so min = max = value.
api::SeriesPoint stored_point(SQLite::Statement& row) {
  const double value = row.getColumn(1).getDouble();
  return api::SeriesPoint{
      row.getColumn(0).getInt64(), value, value, value, optional_integer(row.getColumn(2)),
      row.getColumn(3).getDouble()};
}

// Points in step order gathered into the buckets (step - first) / width, the last of `count` taking
// any past it: per bucket its first
// step, the mean, min and max value, the rank when one rank alone is in it, the latest time. The
// offsets from `first` are unsigned: exact for any two int64 steps, whatever a database holds.
class StepBuckets {
 public:
  StepBuckets(std::int64_t first, std::uint64_t width, std::uint64_t count)
      : first_(first), width_(width), last_bucket_(count - 1) {}

  void add(const api::SeriesPoint& p) {
    const std::uint64_t bucket = std::min(step_offset(first_, p.step) / width_, last_bucket_);
    if (count_ == 0 || bucket != bucket_) {
      flush();
      bucket_ = bucket;
      open_ = p;
      sum_ = scaled_sum_ = 0;
      low_rank_ = high_rank_ = p.rank;
    }
    ++count_;
    sum_ += p.value;
    scaled_sum_ += std::ldexp(p.value, -kScale);
    open_.min = std::min(open_.min, p.value);
    open_.max = std::max(open_.max, p.value);
    open_.time = std::max(open_.time, p.time);
    if (p.rank) {
      low_rank_ = low_rank_ ? std::min(*low_rank_, *p.rank) : *p.rank;
      high_rank_ = high_rank_ ? std::max(*high_rank_, *p.rank) : *p.rank;
    }
  }

  std::vector<api::SeriesPoint> take() {
    flush();
    return std::move(done_);
  }

 private:
  // The values scaled by 2^-kScale are summed too: the mean of finite values is finite, but their
  // sum may not be (two points of 1.7e308), and then the scaled sum gives the mean.
  static constexpr int kScale = 64;

  void flush() {
    if (count_ == 0) return;
    const double count = static_cast<double>(count_);
    open_.value = std::isfinite(sum_) ? sum_ / count : std::ldexp(scaled_sum_ / count, kScale);
    open_.rank = low_rank_ == high_rank_ ? low_rank_ : std::nullopt;
    done_.push_back(open_);
    count_ = 0;
  }

  std::int64_t first_;
  std::uint64_t width_, last_bucket_;
  std::uint64_t bucket_ = 0;
  std::int64_t count_ = 0;
  api::SeriesPoint open_;
  double sum_ = 0, scaled_sum_ = 0;
  std::optional<std::int64_t> low_rank_, high_rank_;
  std::vector<api::SeriesPoint> done_;
};

}  // namespace

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

std::vector<std::string> RunStore::series_keys(std::int64_t run_id) {
  require_run(run_id);
  return metric_keys(run_id);
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
  api::MetricSeries series;
  series.key = key;
  series.last = last_point(run_id, key, rank);
  if (after_step) {
    SQLite::Statement count(sql_, "SELECT COUNT(*)" + where);
    bind_where(count);
    count.executeStep();
    series.total_points = count.getColumn(0).getInt64();
    SQLite::Statement page(sql_, "SELECT step, value, rank, wall_time" + where +
                                     " AND step > ? ORDER BY step, rank, rowid" +
                                     (max_points ? " LIMIT ?" : ""));
    bind_where(page);
    page.bind(rank ? 4 : 3, *after_step);
    if (max_points) page.bind(rank ? 5 : 4, *max_points);
    while (page.executeStep()) series.points.push_back(stored_point(page));
    return series;
  }
  if (!series.last) return series;
  // One pass in step order (the index's, unique per step): every point counted and kept while
  // there are at most max_points, and gathered into equal-width step buckets, which replace them
  // past that. Width ceil(span / max_points) keeps the bucket count in bounds; with span - 1 the
  // offset of the last step that is (span - 1) / max_points + 1, short of that only where the
  // span is all of int64 (a database written before steps were checked), whose last bucket then
  // takes the last step too.
  SQLite::Statement first(sql_, "SELECT MIN(step)" + where);
  bind_where(first);
  first.executeStep();
  const std::int64_t first_step = first.getColumn(0).getInt64();
  const std::uint64_t last_offset = step_offset(first_step, series.last->step);
  const std::uint64_t bucket_count = max_points ? static_cast<std::uint64_t>(*max_points) : 1;
  const std::uint64_t whole = last_offset / bucket_count;
  const std::uint64_t width = whole + (whole < std::numeric_limits<std::uint64_t>::max() ? 1 : 0);
  StepBuckets buckets(first_step, width, bucket_count);
  SQLite::Statement points(sql_, "SELECT step, value, rank, wall_time" + where + " ORDER BY step");
  bind_where(points);
  while (points.executeStep()) {
    const api::SeriesPoint point = stored_point(points);
    buckets.add(point);
    if (!max_points || ++series.total_points <= *max_points) {
      series.points.push_back(point);
    } else if (!series.downsampled) {
      series.downsampled = true;
      series.points.clear();
      series.points.shrink_to_fit();
    }
  }
  if (!max_points) series.total_points = static_cast<std::int64_t>(series.points.size());
  if (series.downsampled) series.points = buckets.take();
  return series;
}

}  // namespace nmt::tracker
