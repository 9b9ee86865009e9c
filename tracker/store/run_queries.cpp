// RunStore's run reads: listings with filters, extra columns and a sort; one run in full; the
// sweeps. Values are always bound; the only text spliced into SQL is from fixed tables here.

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <stdexcept>

#include "tracker/store/run_store.h"
#include "tracker/store/sql_rows.h"

namespace nmt::tracker {
namespace {

// Columns 0..18 of every summary, in the order read_summary() reads them.
const char* const kSummarySelect =
    "SELECT r.id, e.name, r.name, r.uid, r.sweep, r.row_label, r.row_index, r.status, "
    "r.config_hash, r.git_revision, r.host, r.world_size, r.slurm_job_id, r.slurm_array_id, "
    "r.attempt, r.started_at, r.ended_at, r.deleted_at, "
    "(SELECT COUNT(*) FROM run_attempts a WHERE a.run_id = r.id) "
    "FROM runs r JOIN experiments e ON e.id = r.experiment_id";

api::RunSummary read_summary(SQLite::Statement& q, double now) {
  api::RunSummary s;
  s.run_id = q.getColumn(0).getInt64();
  s.experiment = q.getColumn(1).getString();
  s.name = q.getColumn(2).getString();
  s.uid = optional_text(q.getColumn(3));
  s.sweep = optional_text(q.getColumn(4));
  s.row_label = optional_text(q.getColumn(5));
  s.row_index = optional_integer(q.getColumn(6));
  s.status = q.getColumn(7).getString();
  s.config_hash = optional_text(q.getColumn(8));
  s.git_revision = optional_text(q.getColumn(9));
  s.host = optional_text(q.getColumn(10));
  s.world_size = optional_integer(q.getColumn(11));
  s.slurm_job_id = optional_text(q.getColumn(12));
  s.slurm_array_id = optional_text(q.getColumn(13));
  s.attempt = q.getColumn(14).getInt64();
  s.started_at = q.getColumn(15).getDouble();
  s.ended_at = optional_number(q.getColumn(16));
  s.deleted_at = optional_number(q.getColumn(17));
  s.attempts = q.getColumn(18).getInt64();
  s.duration_s = s.ended_at.value_or(now) - s.started_at;
  return s;
}

// The SQL of a summary field a listing sorts by (api::summary_sort_fields()).
std::string sort_expression(const std::string& field, double now) {
  static const std::map<std::string, std::string> kColumns = {
      {"run_id", "r.id"},
      {"experiment", "e.name"},
      {"attempts", "(SELECT COUNT(*) FROM run_attempts a WHERE a.run_id = r.id)"}};
  if (field == "duration_s") {
    return fmt::format("(COALESCE(r.ended_at, {:.6f}) - r.started_at)", now);
  }
  const auto it = kColumns.find(field);
  return it != kColumns.end() ? it->second : "r." + field;
}

// A query value that reads wholly as a finite number ("256", "0.1", "1e-4"); bools as 1/0.
std::optional<double> parse_number(const std::string& text) {
  if (const auto flag = bool_number(text)) return flag;
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

// Orders two optional sort values: numbers before texts, absent ones last whatever the direction.
bool sorts_before(const std::optional<api::ParamValue>& a, const std::optional<api::ParamValue>& b,
                  bool descending) {
  if (!a || !b) return a.has_value() && !b.has_value();
  if (a->index() != b->index()) return a->index() < b->index();
  return descending ? *b < *a : *a < *b;
}

}  // namespace

std::vector<api::RunSummary> RunStore::list_runs(const api::RunQuery& filter) {
  const double now = now_seconds();
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
  equal("r.name", filter.name);
  if (filter.deleted == api::DeletedRuns::kHidden) sql += " AND r.deleted_at IS NULL";
  if (filter.deleted == api::DeletedRuns::kOnly) sql += " AND r.deleted_at IS NOT NULL";
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
  const auto& sort = filter.sort;
  if (sort && sort->source == api::SortOrder::Source::kSummary) {
    const std::string expression = sort_expression(sort->field, now);
    sql += fmt::format(" ORDER BY {0} IS NULL, {0}{1}, r.id", expression,
                       sort->descending ? " DESC" : "");
  } else {
    sql += " ORDER BY r.id";
  }
  SQLite::Statement query(sql_, sql);
  for (std::size_t i = 0; i < bounds.size(); ++i) {
    const int index = static_cast<int>(i) + 1;
    if (bounds[i].number) {
      query.bind(index, *bounds[i].number);
    } else {
      query.bind(index, bounds[i].text);
    }
  }
  std::vector<api::RunSummary> runs;
  while (query.executeStep()) {
    runs.push_back(read_summary(query, now));
  }
  add_columns(runs, filter);
  return runs;
}

// Per split, the figures of the latest eval (newest created_at, then id), keyed SPLIT/FIGURE.
std::map<std::string, double> RunStore::last_evals(std::int64_t run_id) {
  SQLite::Statement& query = last_evals_;
  ResetOnExit reset(query);
  query.bind(1, run_id);
  std::map<std::string, double> figures;
  while (query.executeStep()) {
    const std::string split = query.getColumn(0).getString();
    const char* const names[] = {"bleu", "chrf", "ppl"};
    for (int i = 0; i < 3; ++i) {
      if (const auto value = optional_number(query.getColumn(i + 1))) {
        figures[split + "/" + names[i]] = *value;
      }
    }
  }
  return figures;
}

// The last metric values, eval figures and params the query asks for, and the sort by a metric,
// an eval figure or a param.
void RunStore::add_columns(std::vector<api::RunSummary>& runs, const api::RunQuery& query) {
  const auto& sort = query.sort;
  const bool by_metric = sort && sort->source == api::SortOrder::Source::kMetric;
  const bool by_param = sort && sort->source == api::SortOrder::Source::kParam;
  const bool by_eval = sort && sort->source == api::SortOrder::Source::kEval;
  std::map<std::int64_t, std::optional<api::ParamValue>> sort_value;
  for (api::RunSummary& run : runs) {
    if (query.evals || by_eval) {
      std::map<std::string, double> figures = last_evals(run.run_id);
      if (by_eval) {
        const auto it = figures.find(sort->field);
        sort_value[run.run_id] =
            it == figures.end() ? std::nullopt : std::optional<api::ParamValue>(it->second);
      }
      if (query.evals) {
        for (auto it = figures.begin(); it != figures.end();) {
          it = query.evals->selects(it->first) ? std::next(it) : figures.erase(it);
        }
        run.last_evals = std::move(figures);
      }
    }
    if (query.metrics) {
      run.last_metrics.emplace();
      const auto keys = query.metrics->all ? metric_keys(run.run_id) : query.metrics->keys;
      for (const std::string& key : keys) {
        if (const auto last = last_point(run.run_id, key, std::nullopt)) {
          (*run.last_metrics)[key] = last->value;
        }
      }
    }
    if (query.show_params || by_param) {
      api::Params params = run_params(run.run_id);
      if (by_param) {
        const auto it = params.find(sort->field);
        sort_value[run.run_id] = it == params.end() ? std::nullopt : std::optional(it->second);
      }
      if (query.show_params) {
        if (!query.show_params->all) {
          for (auto it = params.begin(); it != params.end();) {
            it = query.show_params->selects(it->first) ? std::next(it) : params.erase(it);
          }
        }
        run.params = std::move(params);
      }
    }
    if (by_metric) {
      const auto last = last_point(run.run_id, sort->field, std::nullopt);
      sort_value[run.run_id] = last ? std::optional<api::ParamValue>(last->value) : std::nullopt;
    }
  }
  if (by_metric || by_param || by_eval) {
    std::stable_sort(runs.begin(), runs.end(), [&](const auto& a, const auto& b) {
      return sorts_before(sort_value[a.run_id], sort_value[b.run_id], sort->descending);
    });
  }
}

api::RunDetail RunStore::get_run(std::int64_t run_id) {
  SQLite::Statement query(sql_, std::string(kSummarySelect) + " WHERE r.id = ?");
  query.bind(1, run_id);
  if (!query.executeStep()) {
    throw NotFound(fmt::format("unknown run {}", run_id));
  }
  api::RunDetail run;
  run.summary = read_summary(query, now_seconds());
  SQLite::Statement config(sql_, "SELECT config FROM runs WHERE id = ?");
  config.bind(1, run_id);
  config.executeStep();
  run.config = optional_text(config.getColumn(0));
  run.params = run_params(run_id);

  SQLite::Statement attempts(sql_,
                             "SELECT attempt, status, started_at, ended_at, host, world_size, "
                             "slurm_job_id, slurm_array_id, run_dir, provenance, last_contact_at "
                             "FROM run_attempts "
                             "WHERE run_id = ? ORDER BY attempt");
  attempts.bind(1, run_id);
  while (attempts.executeStep()) {
    const auto provenance = optional_text(attempts.getColumn(9));
    run.attempts.push_back(
        api::Attempt{attempts.getColumn(0).getInt64(), attempts.getColumn(1).getString(),
                     attempts.getColumn(2).getDouble(), optional_number(attempts.getColumn(3)),
                     optional_text(attempts.getColumn(4)), optional_integer(attempts.getColumn(5)),
                     optional_text(attempts.getColumn(6)), optional_text(attempts.getColumn(7)),
                     optional_text(attempts.getColumn(8)),
                     provenance ? params_of_json(*provenance) : api::Params{},
                     optional_number(attempts.getColumn(10))});
  }
  SQLite::Statement evals(sql_,
                          "SELECT id, split, step, checkpoint, bleu, chrf, perplexity, signature, "
                          "created_at FROM evals WHERE run_id = ? ORDER BY id");
  evals.bind(1, run_id);
  while (evals.executeStep()) {
    const api::EvalRecord record{
        evals.getColumn(1).getString(),      optional_integer(evals.getColumn(2)),
        optional_text(evals.getColumn(3)),   optional_number(evals.getColumn(4)),
        optional_number(evals.getColumn(5)), optional_number(evals.getColumn(6)),
        optional_text(evals.getColumn(7))};
    run.evals.push_back(
        api::Eval{evals.getColumn(0).getInt64(), record, evals.getColumn(8).getDouble()});
  }
  SQLite::Statement artifacts(sql_,
                              "SELECT id, kind, path, step, averaged_from, created_at, "
                              "content IS NOT NULL FROM artifacts WHERE run_id = ? ORDER BY id");
  artifacts.bind(1, run_id);
  while (artifacts.executeStep()) {
    const api::ArtifactRecord record{artifacts.getColumn(1).getString(),
                                     artifacts.getColumn(2).getString(),
                                     optional_integer(artifacts.getColumn(3)),
                                     optional_integer(artifacts.getColumn(4)), std::nullopt};
    run.artifacts.push_back(api::Artifact{artifacts.getColumn(0).getInt64(), record,
                                          artifacts.getColumn(5).getDouble(),
                                          artifacts.getColumn(6).getInt() != 0});
  }
  run.metric_keys = metric_keys(run_id);
  return run;
}

ArtifactContent RunStore::artifact_content(std::int64_t run_id, std::int64_t artifact_id) {
  SQLite::Statement query(sql_, "SELECT path, content FROM artifacts WHERE run_id = ? AND id = ?");
  query.bind(1, run_id);
  query.bind(2, artifact_id);
  if (!query.executeStep()) {
    require_run(run_id);
    throw NotFound(fmt::format("run {} has no artifact {}", run_id, artifact_id));
  }
  return ArtifactContent{query.getColumn(0).getString(), optional_text(query.getColumn(1))};
}

api::Params RunStore::run_params(std::int64_t run_id) {
  SQLite::Statement query(sql_,
                          "SELECT key, value_text, value_num FROM params WHERE run_id = ? "
                          "ORDER BY key");
  query.bind(1, run_id);
  api::Params params;
  while (query.executeStep()) {
    params[query.getColumn(0).getString()] = param_value(query.getColumn(1), query.getColumn(2));
  }
  return params;
}

// A run's distinct keys by one index seek each (metrics_series), not a scan of all its points.
std::vector<std::string> RunStore::metric_keys(std::int64_t run_id) {
  SQLite::Statement query(
      sql_,
      "WITH RECURSIVE k(key) AS ("
      "  SELECT (SELECT MIN(key) FROM metrics WHERE run_id = ?1)"
      "  UNION ALL"
      "  SELECT (SELECT MIN(key) FROM metrics WHERE run_id = ?1 AND key > k.key) FROM k"
      "  WHERE k.key IS NOT NULL)"
      "SELECT key FROM k WHERE key IS NOT NULL");
  query.bind(1, run_id);
  std::vector<std::string> keys;
  while (query.executeStep()) {
    keys.push_back(query.getColumn(0).getString());
  }
  return keys;
}

std::vector<api::SweepSummary> RunStore::list_sweeps() {
  SQLite::Statement query(
      sql_,
      "SELECT r.sweep, COUNT(*), SUM(r.status = 'finished'), SUM(r.status = 'running'), "
      "CASE WHEN COUNT(DISTINCT e.name) = 1 THEN MIN(e.name) END "
      "FROM runs r JOIN experiments e ON e.id = r.experiment_id "
      "WHERE r.sweep IS NOT NULL AND r.deleted_at IS NULL GROUP BY r.sweep ORDER BY r.sweep");
  std::vector<api::SweepSummary> sweeps;
  while (query.executeStep()) {
    sweeps.push_back(api::SweepSummary{query.getColumn(0).getString(),
                                       query.getColumn(1).getInt64(), query.getColumn(2).getInt64(),
                                       query.getColumn(3).getInt64(),
                                       optional_text(query.getColumn(4))});
  }
  return sweeps;
}

}  // namespace nmt::tracker
