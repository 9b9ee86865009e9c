// RunStore's write side (tracker/API.md; the reads are in run_queries.cpp and sweep_table.cpp).
// Every write is one IMMEDIATE transaction (the write lock is taken up front, so a busy database
// fails at BEGIN, not halfway), and values are always bound, never spliced into SQL.

#include "tracker/store/run_store.h"

#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>

#include <chrono>
#include <cmath>

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

}  // namespace nmt::tracker
