// RunStore's writes after registration (tracker/API.md): statuses, metric batches, evals,
// artifacts, deletion, and the count behind the per-run metric keys limit. Registration is in
// run_registration.cpp; the reads are in run_queries.cpp, metric_series.cpp and sweep_runs.cpp.
// Every write is one IMMEDIATE transaction (the write lock is taken up front, so a busy database
// fails at BEGIN, not halfway), and values are always bound, never spliced into SQL.

#include "tracker/store/run_store.h"

#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>

#include <cmath>

#include "tracker/api/run_rules.h"
#include "tracker/store/sql_rows.h"

namespace nmt::tracker {

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
                          "ORDER BY rowid DESC LIMIT 1"),
      // Per split of a run, its latest eval: newest created_at, then highest id.
      last_evals_(sql_,
                  "SELECT split, bleu, chrf, perplexity FROM evals e WHERE run_id = ?1 AND id = "
                  "(SELECT id FROM evals n WHERE n.run_id = ?1 AND n.split = e.split "
                  "ORDER BY created_at DESC, id DESC LIMIT 1)") {}

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
      sql_,
      "UPDATE run_attempts SET status = ?, ended_at = ?, last_contact_at = ? WHERE run_id = ? AND "
      "attempt = ?");
  update_attempt.bind(1, status);
  bind_ended_at(update_attempt, 2);
  update_attempt.bind(3, now);
  update_attempt.bind(4, run_id);
  update_attempt.bind(5, target);
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
    if (point.time && !std::isfinite(*point.time)) {
      throw std::invalid_argument(
          fmt::format("points[{}].time must be a finite number, not {}", i, *point.time));
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
  const auto bind_fields = [&](SQLite::Statement& statement) {
    bind_values(statement, 2, eval.split, eval.step, eval.checkpoint, eval.bleu, eval.chrf,
                eval.perplexity, eval.signature);
  };
  SQLite::Transaction transaction(sql_, SQLite::TransactionBehavior::IMMEDIATE);
  require_run(run_id);
  // IS: NULL-safe equality, so an absent figure matches only an absent one.
  if (const auto existing = find_record(
          run_id,
          "SELECT id FROM evals WHERE run_id = ? AND split = ? AND step IS ? AND checkpoint IS ? "
          "AND bleu IS ? AND chrf IS ? AND perplexity IS ? AND signature IS ? ORDER BY id LIMIT 1",
          bind_fields)) {
    return *existing;  // the rollback writes nothing
  }
  const std::int64_t id = insert_record(run_id,
                                        "INSERT INTO evals(run_id, split, step, checkpoint, bleu, "
                                        "chrf, perplexity, signature, created_at) "
                                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                        bind_fields);
  transaction.commit();
  return id;
}

std::int64_t RunStore::log_artifact(std::int64_t run_id, const ArtifactRecord& artifact) {
  require_text(artifact.kind, "kind");
  require_text(artifact.path, "path");
  SQLite::Transaction transaction(sql_, SQLite::TransactionBehavior::IMMEDIATE);
  require_run(run_id);
  const auto existing =
      find_record(run_id,
                  "SELECT id FROM artifacts WHERE run_id = ? AND kind = ? AND "
                  "path = ? AND step IS ? ORDER BY id LIMIT 1",
                  [&](SQLite::Statement& find) {
                    bind_values(find, 2, artifact.kind, artifact.path, artifact.step);
                  });
  std::int64_t id = 0;
  if (existing) {
    id = *existing;
    // Only a field sent and different is written, so a record sent again changes no row.
    SQLite::Statement update(sql_,
                             "UPDATE artifacts SET content = COALESCE(?1, content), "
                             "averaged_from = COALESCE(?2, averaged_from) WHERE id = ?3 AND "
                             "(content IS NOT COALESCE(?1, content) OR "
                             "averaged_from IS NOT COALESCE(?2, averaged_from))");
    bind_values(update, 1, artifact.content, artifact.averaged_from);
    update.bind(3, id);
    update.exec();
  } else {
    id = insert_record(run_id,
                       "INSERT INTO artifacts(run_id, kind, path, step, averaged_from, content, "
                       "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                       [&](SQLite::Statement& insert) {
                         bind_values(insert, 2, artifact.kind, artifact.path, artifact.step,
                                     artifact.averaged_from, artifact.content);
                       });
  }
  transaction.commit();
  return id;
}

std::optional<std::int64_t> RunStore::find_record(
    std::int64_t run_id, const char* find_sql,
    const std::function<void(SQLite::Statement&)>& bind_fields) {
  SQLite::Statement find(sql_, find_sql);
  find.bind(1, run_id);
  bind_fields(find);
  if (!find.executeStep()) return std::nullopt;
  return find.getColumn(0).getInt64();
}

std::int64_t RunStore::insert_record(std::int64_t run_id, const char* sql,
                                     const std::function<void(SQLite::Statement&)>& bind_fields) {
  SQLite::Statement insert(sql_, sql);
  insert.bind(1, run_id);
  bind_fields(insert);
  insert.bind(insert.getBindParameterCount(), now_seconds());  // created_at
  insert.exec();
  return sql_.getLastInsertRowid();
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

}  // namespace nmt::tracker
