// RunStore's read side: run listings with filters, one run in full, and metric series
// (downsampled in SQL when asked for fewer points than stored). Values are always bound.

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "tracker/store/run_store.h"
#include "tracker/store/sql_rows.h"

namespace nmt::tracker {

using nlohmann::json;

namespace {

const char* const kSummarySelect =
    "SELECT r.id AS run_id, e.name AS experiment, r.name AS name, r.uid AS uid, r.sweep AS sweep, "
    "r.row_label AS row_label, r.row_index AS row_index, r.status AS status, "
    "r.config_hash AS config_hash, r.git_revision AS git_revision, r.host AS host, "
    "r.world_size AS world_size, r.slurm_job_id AS slurm_job_id, "
    "r.slurm_array_id AS slurm_array_id, r.attempt AS attempt, r.started_at AS started_at, "
    "r.ended_at AS ended_at FROM runs r JOIN experiments e ON e.id = r.experiment_id";

const char* const kEvalsSelect =
    "SELECT id AS eval_id, split, step, checkpoint, bleu, chrf, perplexity, signature, "
    "created_at FROM evals WHERE run_id = ? ORDER BY id";
const char* const kAttemptsSelect =
    "SELECT attempt, status, started_at, ended_at, host, world_size, slurm_job_id, "
    "slurm_array_id FROM run_attempts WHERE run_id = ? ORDER BY attempt";
const char* const kArtifactsSelect =
    "SELECT id AS artifact_id, kind, path, step, averaged_from, created_at FROM artifacts "
    "WHERE run_id = ? ORDER BY id";

// A query value that reads wholly as a finite number ("256", "0.1", "1e-4"); bools as 1/0.
std::optional<double> parse_number(const std::string& text) {
  if (text == "true" || text == "false") {
    return text == "true" ? 1.0 : 0.0;
  }
  if (text.empty() || std::isspace(static_cast<unsigned char>(text.front()))) {
    return std::nullopt;
  }
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

// One bound value of a dynamically built WHERE clause.
struct Bound {
  std::string text;
  std::optional<double> number;
};

}  // namespace

json RunStore::list_runs(const RunFilter& filter) {
  std::string sql = std::string(kSummarySelect) + " WHERE 1";
  std::vector<Bound> bounds;
  const auto equal = [&](const char* column, const std::optional<std::string>& value) {
    if (value) {
      sql += fmt::format(" AND {} = ?", column);
      bounds.push_back({*value, std::nullopt});
    }
  };
  equal("e.name", filter.experiment);
  equal("r.sweep", filter.sweep);
  equal("r.status", filter.status);
  equal("r.uid", filter.uid);
  for (const auto& [key, value] : filter.params) {
    const auto number = parse_number(value);
    sql += " AND EXISTS (SELECT 1 FROM params p WHERE p.run_id = r.id AND p.key = ? AND ";
    sql += number ? "(p.value_num = ? OR p.value_text = ?))" : "p.value_text = ?)";
    bounds.push_back({key, std::nullopt});
    if (number) {
      bounds.push_back({"", number});
    }
    bounds.push_back({value, std::nullopt});
  }
  SQLite::Statement query(sql_, sql + " ORDER BY r.id");
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    const int index = static_cast<int>(i) + 1;
    if (bounds[i].number) {
      query.bind(index, *bounds[i].number);
    } else {
      query.bind(index, bounds[i].text);
    }
  }
  return all_rows(query);
}

json RunStore::get_run(std::int64_t run_id) {
  SQLite::Statement query(sql_, std::string(kSummarySelect) + " WHERE r.id = ?");
  query.bind(1, run_id);
  if (!query.executeStep()) {
    throw NotFound(fmt::format("unknown run {}", run_id));
  }
  json run = row_json(query);
  SQLite::Statement config(sql_, "SELECT config FROM runs WHERE id = ?");
  config.bind(1, run_id);
  config.executeStep();
  run["config"] = column_json(config.getColumn(0));
  run["params"] = run_params(run_id);
  run["attempts"] = rows_of_run(kAttemptsSelect, run_id);
  run["evals"] = rows_of_run(kEvalsSelect, run_id);
  run["artifacts"] = rows_of_run(kArtifactsSelect, run_id);
  run["metric_keys"] = metric_keys(run_id);
  return run;
}

json RunStore::run_params(std::int64_t run_id) {
  SQLite::Statement query(sql_,
                          "SELECT key, value_text, value_num FROM params WHERE run_id = ? "
                          "ORDER BY key");
  query.bind(1, run_id);
  json params = json::object();
  while (query.executeStep()) {
    const auto num = query.getColumn(2);
    params[query.getColumn(0).getString()] =
        num.isNull() ? column_json(query.getColumn(1)) : number_json(num.getDouble());
  }
  return params;
}

json RunStore::rows_of_run(const char* select, std::int64_t run_id) {
  SQLite::Statement query(sql_, select);
  query.bind(1, run_id);
  return all_rows(query);
}

json RunStore::metric_keys(std::int64_t run_id) {
  SQLite::Statement query(sql_, "SELECT DISTINCT key FROM metrics WHERE run_id = ? ORDER BY key");
  query.bind(1, run_id);
  json keys = json::array();
  while (query.executeStep()) {
    keys.push_back(query.getColumn(0).getString());
  }
  return keys;
}

json RunStore::metric_series(std::int64_t run_id, const std::string& key,
                             std::optional<std::int64_t> max_points,
                             std::optional<std::int64_t> rank) {
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
  const std::int64_t count = range.getColumn(0).getInt64();
  // The newest point exactly, also when the points are downsampled (a bucket holds a mean).
  SQLite::Statement newest(sql_, "SELECT step, value, rank, wall_time AS time" + where +
                                     " ORDER BY step DESC, rank, rowid DESC LIMIT 1");
  bind_where(newest);
  json last = all_rows(newest);
  last = last.empty() ? json() : last.front();
  if (!max_points || count <= *max_points) {
    SQLite::Statement raw(
        sql_, "SELECT step, value, value AS min, value AS max, rank, wall_time AS time" + where +
                  " ORDER BY step, rank, rowid");
    bind_where(raw);
    return json{{"key", key},
                {"points", all_rows(raw)},
                {"total_points", count},
                {"downsampled", false},
                {"last", std::move(last)}};
  }
  // Equal-width step buckets; width = ceil(span / max_points) keeps the bucket count in bounds.
  const std::int64_t first = range.getColumn(1).getInt64();
  const std::int64_t span = range.getColumn(2).getInt64() - first + 1;
  const std::int64_t width = (span + *max_points - 1) / *max_points;
  SQLite::Statement buckets(
      sql_,
      "SELECT MIN(step) AS step, AVG(value) AS value, MIN(value) AS min, MAX(value) AS max, "
      "CASE WHEN MIN(rank) = MAX(rank) THEN MIN(rank) END AS rank, MAX(wall_time) AS time" +
          where + " GROUP BY (step - ?) / ? ORDER BY 1");
  bind_where(buckets);
  buckets.bind(next_index, first);
  buckets.bind(next_index + 1, width);
  return json{{"key", key},
              {"points", all_rows(buckets)},
              {"total_points", count},
              {"downsampled", true},
              {"last", std::move(last)}};
}

}  // namespace nmt::tracker
