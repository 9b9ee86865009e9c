// RunStore: writes and queries of the tracker (tracker/API.md). Every write is one IMMEDIATE
// transaction (the write lock is taken up front, so a busy database fails at BEGIN, not halfway),
// values are always bound, never spliced into SQL, and results are built as JSON for the handler.

#include "tracker/store/run_store.h"

#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>

namespace nmt::tracker {
namespace {

using nlohmann::json;

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// A cached statement must be reset after every use, or it keeps its read snapshot open (and
// blocks WAL checkpoints); tryReset because reset() rethrows the last step's error.
class ResetOnExit {
 public:
  explicit ResetOnExit(SQLite::Statement& statement) : statement_(statement) {}
  ~ResetOnExit() { statement_.tryReset(); }
  ResetOnExit(const ResetOnExit&) = delete;
  ResetOnExit& operator=(const ResetOnExit&) = delete;

 private:
  SQLite::Statement& statement_;
};

template <typename T>
void bind_optional(SQLite::Statement& statement, int index, const std::optional<T>& value) {
  if (value) {
    statement.bind(index, *value);
  } else {
    statement.bind(index);  // NULL
  }
}

// Params come back as integers when integral, so 256 reads as 256 and not 256.0.
json number_json(double value) {
  if (std::nearbyint(value) == value && std::fabs(value) < 9.0e15) {
    return static_cast<std::int64_t>(value);
  }
  return value;
}

json column_json(const SQLite::Column& column) {
  if (column.isInteger()) {
    return column.getInt64();
  }
  if (column.isFloat()) {
    return column.getDouble();
  }
  if (column.isText()) {
    return column.getString();
  }
  return nullptr;  // NULL; the schema stores no blobs
}

// The current row as an object keyed by the column names of the SELECT.
json row_json(SQLite::Statement& statement) {
  json row = json::object();
  for (int i = 0; i < statement.getColumnCount(); ++i) {
    row[statement.getColumnName(i)] = column_json(statement.getColumn(i));
  }
  return row;
}

json all_rows(SQLite::Statement& statement) {
  json rows = json::array();
  while (statement.executeStep()) {
    rows.push_back(row_json(statement));
  }
  return rows;
}

void require_text(const std::string& value, const char* what) {
  if (value.empty()) {
    throw std::invalid_argument(fmt::format("{} must not be empty", what));
  }
}

void validate_spec(const RunSpec& spec) {
  require_text(spec.experiment, "experiment");
  require_text(spec.name, "run name");
  if (!spec.params.is_object()) {
    throw std::invalid_argument("params must be an object of flat key: value pairs");
  }
  for (const auto& [key, value] : spec.params.items()) {
    if (key.empty()) {
      throw std::invalid_argument("params must not have an empty key");
    }
    if (!value.is_number() && !value.is_string() && !value.is_boolean()) {
      throw std::invalid_argument(
          fmt::format("param '{}' must be a number, string or bool, not {}", key, value.dump()));
    }
  }
}

}  // namespace

RunStore::RunStore(Database& db)
    : db_(db),
      sql_(db.sqlite()),
      run_exists_(sql_, "SELECT 1 FROM runs WHERE id = ?"),
      insert_batch_(sql_,
                    "INSERT OR IGNORE INTO ingested_batches(run_id, rank, sequence) "
                    "VALUES (?, ?, ?)"),
      insert_metric_(sql_,
                     "INSERT INTO metrics(run_id, rank, key, step, value, wall_time) "
                     "VALUES (?, ?, ?, ?, ?, ?)"),
      upsert_param_(sql_,
                    "INSERT INTO params(run_id, key, value_text, value_num) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT(run_id, key) DO UPDATE SET "
                    "value_text = excluded.value_text, value_num = excluded.value_num") {}

bool RunStore::is_valid_status(const std::string& status) {
  return status == "running" || status == "finished" || status == "failed" || status == "killed";
}

RunHandle RunStore::create_or_resume_run(const RunSpec& spec) {
  validate_spec(spec);
  SQLite::Transaction transaction(sql_, SQLite::TransactionBehavior::IMMEDIATE);
  const double now = now_seconds();
  const RunHandle handle = insert_or_resume(experiment_id(spec.experiment, now), spec, now);
  upsert_params(handle.run_id, spec.params);
  transaction.commit();
  return handle;
}

std::int64_t RunStore::experiment_id(const std::string& name, double now) {
  SQLite::Statement insert(
      sql_, "INSERT INTO experiments(name, created_at) VALUES (?, ?) ON CONFLICT(name) DO NOTHING");
  insert.bind(1, name);
  insert.bind(2, now);
  insert.exec();
  SQLite::Statement select(sql_, "SELECT id FROM experiments WHERE name = ?");
  select.bind(1, name);
  select.executeStep();
  return select.getColumn(0).getInt64();
}

namespace {

// Binds the ten optional run fields from `first` on, in the order the run SQL lists them.
void bind_run_fields(SQLite::Statement& statement, int first, const RunSpec& spec) {
  bind_optional(statement, first, spec.sweep);
  bind_optional(statement, first + 1, spec.row_label);
  bind_optional(statement, first + 2, spec.row_index);
  bind_optional(statement, first + 3, spec.config);
  bind_optional(statement, first + 4, spec.config_hash);
  bind_optional(statement, first + 5, spec.git_revision);
  bind_optional(statement, first + 6, spec.host);
  bind_optional(statement, first + 7, spec.world_size);
  bind_optional(statement, first + 8, spec.slurm_job_id);
  bind_optional(statement, first + 9, spec.slurm_array_id);
}

}  // namespace

RunHandle RunStore::insert_or_resume(std::int64_t experiment, const RunSpec& spec, double now) {
  SQLite::Statement existing(sql_,
                             "SELECT id, attempt FROM runs WHERE experiment_id = ? AND name = ?");
  existing.bind(1, experiment);
  existing.bind(2, spec.name);
  if (existing.executeStep()) {
    const RunHandle handle{existing.getColumn(0).getInt64(), existing.getColumn(1).getInt64() + 1,
                           true};
    // A requeued job resumes its run; fields it does not send keep their first values.
    SQLite::Statement resume(
        sql_,
        "UPDATE runs SET sweep = COALESCE(?, sweep), row_label = COALESCE(?, row_label), "
        "row_index = COALESCE(?, row_index), config = COALESCE(?, config), "
        "config_hash = COALESCE(?, config_hash), git_revision = COALESCE(?, git_revision), "
        "host = COALESCE(?, host), world_size = COALESCE(?, world_size), "
        "slurm_job_id = COALESCE(?, slurm_job_id), slurm_array_id = COALESCE(?, slurm_array_id), "
        "attempt = ?, status = 'running', ended_at = NULL WHERE id = ?");
    bind_run_fields(resume, 1, spec);
    resume.bind(11, handle.attempt);
    resume.bind(12, handle.run_id);
    resume.exec();
    return handle;
  }
  SQLite::Statement insert(
      sql_,
      "INSERT INTO runs(sweep, row_label, row_index, config, config_hash, git_revision, host, "
      "world_size, slurm_job_id, slurm_array_id, experiment_id, name, status, attempt, "
      "started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', 1, ?)");
  bind_run_fields(insert, 1, spec);
  insert.bind(11, experiment);
  insert.bind(12, spec.name);
  insert.bind(13, now);
  insert.exec();
  return RunHandle{sql_.getLastInsertRowid(), 1, false};
}

void RunStore::upsert_params(std::int64_t run_id, const json& params) {
  ResetOnExit reset(upsert_param_);
  for (const auto& [key, value] : params.items()) {
    upsert_param_.tryReset();
    upsert_param_.bind(1, run_id);
    upsert_param_.bind(2, key);
    if (value.is_string()) {
      upsert_param_.bind(3, value.get_ref<const std::string&>());
      upsert_param_.bind(4);
    } else {
      upsert_param_.bind(3);
      upsert_param_.bind(
          4, value.is_boolean() ? (value.get<bool>() ? 1.0 : 0.0) : value.get<double>());
    }
    upsert_param_.exec();
  }
}

void RunStore::require_run(std::int64_t run_id) {
  ResetOnExit reset(run_exists_);
  run_exists_.bind(1, run_id);
  if (!run_exists_.executeStep()) {
    throw NotFound(fmt::format("unknown run {}", run_id));
  }
}

void RunStore::set_status(std::int64_t run_id, const std::string& status) {
  if (!is_valid_status(status)) {
    throw std::invalid_argument(
        fmt::format("status '{}' is not one of running, finished, failed, killed", status));
  }
  SQLite::Transaction transaction(sql_, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement update(sql_, "UPDATE runs SET status = ?, ended_at = ? WHERE id = ?");
  update.bind(1, status);
  bind_optional(update, 2, status == "running" ? std::nullopt : std::optional(now_seconds()));
  update.bind(3, run_id);
  if (update.exec() == 0) {
    throw NotFound(fmt::format("unknown run {}", run_id));
  }
  transaction.commit();
}

IngestResult RunStore::ingest_metrics(std::int64_t run_id, std::int64_t rank, std::int64_t sequence,
                                      const std::vector<MetricPoint>& points) {
  SQLite::Transaction transaction(sql_, SQLite::TransactionBehavior::IMMEDIATE);
  require_run(run_id);
  {
    ResetOnExit reset(insert_batch_);
    insert_batch_.bind(1, run_id);
    insert_batch_.bind(2, rank);
    insert_batch_.bind(3, sequence);
    if (insert_batch_.exec() == 0) {
      return IngestResult{0, true};  // already acknowledged once; the rollback writes nothing
    }
  }
  const double now = now_seconds();
  ResetOnExit reset(insert_metric_);
  insert_metric_.bind(1, run_id);  // bindings survive reset(): bind the batch constants once
  insert_metric_.bind(2, rank);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const MetricPoint& point = points[i];
    if (point.key.empty() || !std::isfinite(point.value)) {
      throw std::invalid_argument(fmt::format(
          "points[{}]: a metric needs a non-empty key and a finite value (key '{}', value {})", i,
          point.key, point.value));
    }
    insert_metric_.tryReset();
    insert_metric_.bindNoCopy(3, point.key);  // `points` outlives the exec
    insert_metric_.bind(4, point.step);
    insert_metric_.bind(5, point.value);
    insert_metric_.bind(6, point.time.value_or(now));
    insert_metric_.exec();
  }
  transaction.commit();
  return IngestResult{static_cast<std::int64_t>(points.size()), false};
}

std::int64_t RunStore::log_eval(std::int64_t run_id, const EvalRecord& eval) {
  require_text(eval.split, "split");
  SQLite::Transaction transaction(sql_, SQLite::TransactionBehavior::IMMEDIATE);
  require_run(run_id);
  SQLite::Statement insert(
      sql_,
      "INSERT INTO evals(run_id, split, step, checkpoint, bleu, chrf, perplexity, signature, "
      "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  insert.bind(1, run_id);
  insert.bind(2, eval.split);
  bind_optional(insert, 3, eval.step);
  bind_optional(insert, 4, eval.checkpoint);
  bind_optional(insert, 5, eval.bleu);
  bind_optional(insert, 6, eval.chrf);
  bind_optional(insert, 7, eval.perplexity);
  bind_optional(insert, 8, eval.signature);
  insert.bind(9, now_seconds());
  insert.exec();
  const std::int64_t id = sql_.getLastInsertRowid();
  transaction.commit();
  return id;
}

std::int64_t RunStore::log_artifact(std::int64_t run_id, const ArtifactRecord& artifact) {
  require_text(artifact.kind, "kind");
  require_text(artifact.path, "path");
  SQLite::Transaction transaction(sql_, SQLite::TransactionBehavior::IMMEDIATE);
  require_run(run_id);
  SQLite::Statement insert(sql_,
                           "INSERT INTO artifacts(run_id, kind, path, step, averaged_from, "
                           "created_at) VALUES (?, ?, ?, ?, ?, ?)");
  insert.bind(1, run_id);
  insert.bind(2, artifact.kind);
  insert.bind(3, artifact.path);
  bind_optional(insert, 4, artifact.step);
  bind_optional(insert, 5, artifact.averaged_from);
  insert.bind(6, now_seconds());
  insert.exec();
  const std::int64_t id = sql_.getLastInsertRowid();
  transaction.commit();
  return id;
}

// ---- Queries -------------------------------------------------------------------------------

namespace {

const char* const kSummarySelect =
    "SELECT r.id AS run_id, e.name AS experiment, r.name AS name, r.sweep AS sweep, "
    "r.row_label AS row_label, r.row_index AS row_index, r.status AS status, "
    "r.config_hash AS config_hash, r.git_revision AS git_revision, r.host AS host, "
    "r.world_size AS world_size, r.slurm_job_id AS slurm_job_id, "
    "r.slurm_array_id AS slurm_array_id, r.attempt AS attempt, r.started_at AS started_at, "
    "r.ended_at AS ended_at FROM runs r JOIN experiments e ON e.id = r.experiment_id";

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
  run["evals"] = run_evals(run_id);
  run["artifacts"] = run_artifacts(run_id);
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

json RunStore::run_evals(std::int64_t run_id) {
  SQLite::Statement query(sql_,
                          "SELECT id AS eval_id, split, step, checkpoint, bleu, chrf, perplexity, "
                          "signature, created_at FROM evals WHERE run_id = ? ORDER BY id");
  query.bind(1, run_id);
  return all_rows(query);
}

json RunStore::run_artifacts(std::int64_t run_id) {
  SQLite::Statement query(sql_,
                          "SELECT id AS artifact_id, kind, path, step, averaged_from, created_at "
                          "FROM artifacts WHERE run_id = ? ORDER BY id");
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
  require_text(key, "key");
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
  if (!max_points || count <= *max_points) {
    SQLite::Statement raw(
        sql_, "SELECT step, value, value AS min, value AS max, rank, wall_time AS time" + where +
                  " ORDER BY step, rank, rowid");
    bind_where(raw);
    return json{{"key", key}, {"points", all_rows(raw)}};
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
  return json{{"key", key}, {"points", all_rows(buckets)}};
}

// ---- Sweep table -------------------------------------------------------------------------

namespace {

// The architecture knobs of the paper's Table 3, in its column order.
const std::vector<std::string>& table_param_keys() {
  static const std::vector<std::string> kKeys = {
      "model.layers",    "model.d_model",  "model.d_ff",    "model.heads",
      "model.d_k",       "model.d_v",      "model.dropout", "train.label_smoothing",
      "model.positions", "train.max_steps"};
  return kKeys;
}

struct TableRow {
  json head;    // run_id, name, row_label, row_index, status
  json values;  // every candidate column; the table keeps the chosen ones
  bool has_test = false;
};

json param_or_null(const json& params, const char* key) {
  const auto it = params.find(key);
  return it == params.end() ? json(nullptr) : *it;
}

bool varies(const std::vector<TableRow>& rows, const std::string& column) {
  for (const TableRow& row : rows) {
    if (row.values[column] != rows.front().values[column]) {
      return true;
    }
  }
  return false;
}

std::vector<std::string> table_columns(const std::vector<TableRow>& rows) {
  std::vector<std::string> columns;
  for (const std::string& key : table_param_keys()) {
    if (rows.size() == 1 || varies(rows, key)) {
      columns.push_back(key);
    }
  }
  columns.insert(columns.end(), {"params", "dev_ppl", "dev_bleu"});
  const auto any = [&](const std::string& column, auto&& predicate) {
    for (const TableRow& row : rows) {
      if (predicate(row)) {
        columns.push_back(column);
        return;
      }
    }
  };
  any("test_bleu", [](const TableRow& row) { return row.has_test; });
  for (const char* ref : {"ref_ppl", "ref_bleu", "ref_params"}) {
    any(ref, [&](const TableRow& row) { return !row.values[ref].is_null(); });
  }
  return columns;
}

}  // namespace

json RunStore::newest_evals(std::int64_t run_id) {
  SQLite::Statement query(sql_,
                          "SELECT split, perplexity, bleu FROM evals "
                          "WHERE run_id = ? AND split IN ('valid', 'test') ORDER BY id");
  query.bind(1, run_id);
  json newest = json::object();  // later rows overwrite earlier ones: the newest wins
  while (query.executeStep()) {
    newest[query.getColumn(0).getString()] = json{{"perplexity", column_json(query.getColumn(1))},
                                                  {"bleu", column_json(query.getColumn(2))}};
  }
  return newest;
}

json RunStore::sweep_table(const std::string& sweep) {
  SQLite::Statement query(sql_,
                          "SELECT id AS run_id, name, row_label, row_index, status FROM runs "
                          "WHERE sweep = ? ORDER BY row_index IS NULL, row_index, id");
  query.bind(1, sweep);
  std::vector<TableRow> rows;
  while (query.executeStep()) {
    TableRow row{row_json(query), json::object(), false};
    const json params = run_params(row.head["run_id"].get<std::int64_t>());
    const json evals = newest_evals(row.head["run_id"].get<std::int64_t>());
    for (const std::string& key : table_param_keys()) {
      row.values[key] = param_or_null(params, key.c_str());
    }
    row.values["params"] = param_or_null(params, "model.parameter_count");
    const json valid = evals.value("valid", json::object());
    row.values["dev_ppl"] = valid.value("perplexity", json(nullptr));
    row.values["dev_bleu"] = valid.value("bleu", json(nullptr));
    row.has_test = evals.contains("test");
    row.values["test_bleu"] = evals.value("test", json::object()).value("bleu", json(nullptr));
    row.values["ref_ppl"] = param_or_null(params, "ref.ppl");
    row.values["ref_bleu"] = param_or_null(params, "ref.bleu");
    row.values["ref_params"] = param_or_null(params, "ref.params");
    rows.push_back(std::move(row));
  }
  if (rows.empty()) {
    throw NotFound(fmt::format("unknown sweep '{}': no run names it", sweep));
  }
  const std::vector<std::string> columns = table_columns(rows);
  json table = {{"sweep", sweep}, {"columns", columns}, {"rows", json::array()}};
  for (TableRow& row : rows) {
    row.head["values"] = json::object();
    for (const std::string& column : columns) {
      row.head["values"][column] = row.values[column];
    }
    table["rows"].push_back(std::move(row.head));
  }
  return table;
}

}  // namespace nmt::tracker
