// RunStore's write side (tracker/API.md; the reads are in run_queries.cpp, metric_series.cpp and
// sweep_runs.cpp).
// Every write is one IMMEDIATE transaction (the write lock is taken up front, so a busy database
// fails at BEGIN, not halfway), and values are always bound, never spliced into SQL.

#include "tracker/store/run_store.h"

#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>

#include <chrono>
#include <cmath>

#include "tracker/api/run_rules.h"
#include "tracker/store/sql_rows.h"

namespace nmt::tracker {
namespace {

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
  if (spec.uid && !api::is_valid_run_uid(*spec.uid)) {
    throw std::invalid_argument(fmt::format("uid '{}' {}", *spec.uid, api::kRunUidRule));
  }
  if (spec.attempt.value_or(1) < 1) {
    throw std::invalid_argument(fmt::format("attempt must be at least 1, not {}", *spec.attempt));
  }
  for (const auto& [key, value] : spec.params) {
    if (key.empty()) {
      throw std::invalid_argument("params must not have an empty key");
    }
    if (const double* number = std::get_if<double>(&value); number && !std::isfinite(*number)) {
      throw std::invalid_argument(fmt::format("param '{}' must be finite", key));
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
      // One point per (run, key, step): a step sent again (a resumed attempt re-training it, a
      // point re-sent from metrics.jsonl) takes the latest delivery's value, time and rank.
      upsert_metric_(sql_,
                     "INSERT INTO metrics(run_id, rank, key, step, value, wall_time) "
                     "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(run_id, key, step) DO UPDATE SET "
                     "value = excluded.value, wall_time = excluded.wall_time, "
                     "rank = excluded.rank"),
      upsert_param_(sql_,
                    "INSERT INTO params(run_id, key, value_text, value_num) VALUES (?, ?, ?, ?) "
                    "ON CONFLICT(run_id, key) DO UPDATE SET "
                    "value_text = excluded.value_text, value_num = excluded.value_num"),
      last_point_(sql_,
                  "SELECT step, value, rank, wall_time FROM metrics WHERE run_id = ?1 AND key = ?2 "
                  "AND step = (SELECT MAX(step) FROM metrics WHERE run_id = ?1 AND key = ?2) "
                  "ORDER BY rank, rowid DESC LIMIT 1"),
      last_point_of_rank_(sql_,
                          "SELECT step, value, rank, wall_time FROM metrics WHERE run_id = ?1 "
                          "AND key = ?2 AND rank = ?3 AND step = (SELECT MAX(step) FROM metrics "
                          "WHERE run_id = ?1 AND key = ?2 AND rank = ?3) "
                          "ORDER BY rowid DESC LIMIT 1") {}

RunHandle RunStore::create_or_resume_run(const RunSpec& spec) {
  validate_spec(spec);
  SQLite::Transaction transaction(sql_, SQLite::TransactionBehavior::IMMEDIATE);
  const double now = now_seconds();
  const std::int64_t experiment = experiment_id(spec.experiment, now);
  std::optional<RunHandle> handle;
  if (spec.uid) {
    SQLite::Statement existing(sql_,
                               "SELECT id, attempt, experiment_id, name FROM runs WHERE uid = ?");
    existing.bind(1, *spec.uid);
    if (existing.executeStep()) {
      const RunHandle stored{existing.getColumn(0).getInt64(), existing.getColumn(1).getInt64(),
                             false};
      if (existing.getColumn(2).getInt64() != experiment ||
          existing.getColumn(3).getString() != spec.name) {
        throw Conflict(fmt::format(
            "uid '{}' belongs to run {} '{}', not to '{}' of experiment '{}'; a copied run "
            "directory must not keep its uid (remove it to register a new run)",
            *spec.uid, stored.run_id, existing.getColumn(3).getString(), spec.name,
            spec.experiment));
      }
      if (spec.attempt.value_or(1) <= stored.attempt) {
        return stored;  // a replayed registration: the rollback leaves everything as it was
      }
      handle = resume_run(stored.run_id, spec, now);
    }
  }
  if (!handle) {
    handle = insert_run(experiment, spec, now);
  }
  insert_attempt(handle->run_id, spec, now);
  upsert_params(handle->run_id, spec.params);
  transaction.commit();
  return *handle;
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

RunHandle RunStore::resume_run(std::int64_t run_id, const RunSpec& spec, double now) {
  // An earlier attempt still running never reported its end (SIGKILL, a lost node): it ended no
  // later than this one started. A late report of its own status may still replace `crashed`.
  SQLite::Statement crashed(sql_,
                            "UPDATE run_attempts SET status = 'crashed', ended_at = ? "
                            "WHERE run_id = ? AND attempt < ? AND status = 'running'");
  crashed.bind(1, now);
  crashed.bind(2, run_id);
  crashed.bind(3, *spec.attempt);  // above the stored attempt, so given
  crashed.exec();
  // Fields the new attempt does not send keep their earlier values; started_at stays the run's
  // first start (each attempt's own is in run_attempts).
  SQLite::Statement resume(
      sql_,
      "UPDATE runs SET sweep = COALESCE(?, sweep), row_label = COALESCE(?, row_label), "
      "row_index = COALESCE(?, row_index), config = COALESCE(?, config), "
      "config_hash = COALESCE(?, config_hash), git_revision = COALESCE(?, git_revision), "
      "host = COALESCE(?, host), world_size = COALESCE(?, world_size), "
      "slurm_job_id = COALESCE(?, slurm_job_id), slurm_array_id = COALESCE(?, slurm_array_id), "
      "attempt = ?, status = 'running', ended_at = NULL WHERE id = ?");
  bind_run_fields(resume, 1, spec);
  resume.bind(11, *spec.attempt);  // above the stored attempt, so given
  resume.bind(12, run_id);
  resume.exec();
  return RunHandle{run_id, *spec.attempt, true};
}

RunHandle RunStore::insert_run(std::int64_t experiment, const RunSpec& spec, double now) {
  SQLite::Statement insert(
      sql_,
      "INSERT INTO runs(sweep, row_label, row_index, config, config_hash, git_revision, host, "
      "world_size, slurm_job_id, slurm_array_id, experiment_id, name, uid, status, attempt, "
      "started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)");
  bind_run_fields(insert, 1, spec);
  insert.bind(11, experiment);
  insert.bind(12, spec.name);
  bind_optional(insert, 13, spec.uid);
  insert.bind(14, spec.attempt.value_or(1));
  insert.bind(15, now);
  insert.exec();
  return RunHandle{sql_.getLastInsertRowid(), spec.attempt.value_or(1), false};
}

void RunStore::insert_attempt(std::int64_t run_id, const RunSpec& spec, double now) {
  SQLite::Statement insert(sql_,
                           "INSERT INTO run_attempts(run_id, attempt, started_at, status, host, "
                           "world_size, slurm_job_id, slurm_array_id) "
                           "VALUES (?, ?, ?, 'running', ?, ?, ?, ?)");
  insert.bind(1, run_id);
  insert.bind(2, spec.attempt.value_or(1));
  insert.bind(3, now);
  bind_optional(insert, 4, spec.host);
  bind_optional(insert, 5, spec.world_size);
  bind_optional(insert, 6, spec.slurm_job_id);
  bind_optional(insert, 7, spec.slurm_array_id);
  insert.exec();
}

void RunStore::upsert_params(std::int64_t run_id, const api::Params& params) {
  ResetOnExit reset(upsert_param_);
  for (const auto& [key, value] : params) {
    upsert_param_.tryReset();
    upsert_param_.bind(1, run_id);
    upsert_param_.bind(2, key);
    if (const auto* text = std::get_if<std::string>(&value)) {
      upsert_param_.bind(3, *text);
      upsert_param_.bind(4);
    } else {
      upsert_param_.bind(3);
      upsert_param_.bind(4, std::get<double>(value));
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

void RunStore::set_status(std::int64_t run_id, const std::string& status,
                          std::optional<std::int64_t> attempt) {
  if (!api::is_valid_run_status(status)) {
    throw std::invalid_argument(fmt::format("status '{}' {}", status, api::kRunStatusRule));
  }
  SQLite::Transaction transaction(sql_, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement current(sql_, "SELECT attempt FROM runs WHERE id = ?");
  current.bind(1, run_id);
  if (!current.executeStep()) {
    throw NotFound(fmt::format("unknown run {}", run_id));
  }
  const std::int64_t current_attempt = current.getColumn(0).getInt64();
  const std::int64_t target = attempt.value_or(current_attempt);
  // Every status but running ends the attempt. (A plain double, not an optional: GCC 12 warns
  // falsely of an uninitialized optional<double> here.)
  const bool ends = status != "running";
  const double now = now_seconds();
  const auto bind_ended_at = [&](SQLite::Statement& statement, int index) {
    if (ends) {
      statement.bind(index, now);
    } else {
      statement.bind(index);  // NULL
    }
  };
  SQLite::Statement update_attempt(
      sql_, "UPDATE run_attempts SET status = ?, ended_at = ? WHERE run_id = ? AND attempt = ?");
  update_attempt.bind(1, status);
  bind_ended_at(update_attempt, 2);
  update_attempt.bind(3, run_id);
  update_attempt.bind(4, target);
  // A run written by a build before attempts were recorded has no row for an older attempt.
  if (update_attempt.exec() == 0 && target != current_attempt) {
    throw NotFound(fmt::format("run {} has no attempt {}", run_id, target));
  }
  if (target == current_attempt) {
    SQLite::Statement update(sql_, "UPDATE runs SET status = ?, ended_at = ? WHERE id = ?");
    update.bind(1, status);
    bind_ended_at(update, 2);
    update.bind(3, run_id);
    update.exec();
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
  ResetOnExit reset(upsert_metric_);
  upsert_metric_.bind(1, run_id);  // bindings survive reset(): bind the batch constants once
  upsert_metric_.bind(2, rank);
  for (std::size_t i = 0; i < points.size(); ++i) {
    const MetricPoint& point = points[i];
    if (point.key.empty() || !std::isfinite(point.value)) {
      throw std::invalid_argument(fmt::format(
          "points[{}]: a metric needs a non-empty key and a finite value (key '{}', value {})", i,
          point.key, point.value));
    }
    upsert_metric_.tryReset();
    upsert_metric_.bindNoCopy(3, point.key);  // `points` outlives the exec
    upsert_metric_.bind(4, point.step);
    upsert_metric_.bind(5, point.value);
    upsert_metric_.bind(6, point.time.value_or(now));
    upsert_metric_.exec();
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

void RunStore::set_deleted(std::int64_t run_id, bool deleted) {
  SQLite::Statement update(sql_, deleted ? "UPDATE runs SET deleted_at = COALESCE(deleted_at, ?) "
                                           "WHERE id = ?"
                                         : "UPDATE runs SET deleted_at = NULL WHERE id = ?");
  if (deleted) {
    update.bind(1, now_seconds());
    update.bind(2, run_id);
  } else {
    update.bind(1, run_id);
  }
  if (update.exec() == 0) {
    throw NotFound(fmt::format("unknown run {}", run_id));
  }
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

// The counts behind the per-run limits (api::WriteLimits). Each known key is one seek in an index
// whose first columns are (run_id, key); the run's own keys are only counted when the write would
// add one.

std::optional<std::int64_t> RunStore::metric_key_count_with(std::int64_t run_id,
                                                            const std::vector<std::string>& keys,
                                                            std::int64_t cap) {
  SQLite::Statement known(sql_, "SELECT 1 FROM metrics WHERE run_id = ? AND key = ? LIMIT 1");
  known.bind(1, run_id);
  std::int64_t added = 0;
  for (const std::string& key : keys) {
    known.tryReset();
    known.bindNoCopy(2, key);
    added += known.executeStep() ? 0 : 1;
  }
  if (added == 0) return std::nullopt;
  // The run's distinct keys by one seek each (as metric_keys()), stopped past `cap`.
  SQLite::Statement stored(
      sql_,
      "WITH RECURSIVE k(key) AS ("
      "  SELECT (SELECT MIN(key) FROM metrics WHERE run_id = ?1)"
      "  UNION ALL"
      "  SELECT (SELECT MIN(key) FROM metrics WHERE run_id = ?1 AND key > k.key) FROM k"
      "  WHERE k.key IS NOT NULL LIMIT ?2)"
      "SELECT COUNT(key) FROM k");
  stored.bind(1, run_id);
  stored.bind(2, cap + 2);  // cap + 1 keys and the NULL that ends the walk
  stored.executeStep();
  return stored.getColumn(0).getInt64() + added;
}

std::optional<std::int64_t> RunStore::param_count_with(const RunSpec& spec) {
  if (spec.params.empty()) return std::nullopt;
  const auto registered = static_cast<std::int64_t>(spec.params.size());
  if (!spec.uid) return registered;
  SQLite::Statement run(sql_, "SELECT id, attempt FROM runs WHERE uid = ?");
  run.bind(1, *spec.uid);
  if (!run.executeStep()) return registered;
  if (spec.attempt.value_or(1) <= run.getColumn(1).getInt64()) {
    return std::nullopt;  // a replayed registration writes nothing
  }
  const std::int64_t run_id = run.getColumn(0).getInt64();
  SQLite::Statement known(sql_, "SELECT 1 FROM params WHERE run_id = ? AND key = ?");
  known.bind(1, run_id);
  std::int64_t added = 0;
  for (const auto& [key, value] : spec.params) {
    known.tryReset();
    known.bindNoCopy(2, key);
    added += known.executeStep() ? 0 : 1;
  }
  if (added == 0) return std::nullopt;
  SQLite::Statement stored(sql_, "SELECT COUNT(*) FROM params WHERE run_id = ?");
  stored.bind(1, run_id);
  stored.executeStep();
  return stored.getColumn(0).getInt64() + added;
}

}  // namespace nmt::tracker
