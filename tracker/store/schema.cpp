#include "tracker/store/schema.h"

#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace nmt::tracker {
namespace {

// Append only: a released migration is never edited, a change is a new entry.
const std::vector<const char*>& migrations() {
  static const std::vector<const char*> kMigrations = {
      // 1: the data model of experiments, runs, params, metrics, evals and artifacts.
      R"sql(
      CREATE TABLE experiments (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        created_at REAL NOT NULL
      );
      CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        experiment_id INTEGER NOT NULL REFERENCES experiments(id),
        name TEXT NOT NULL,
        sweep TEXT,
        row_label TEXT,
        row_index INTEGER,
        status TEXT NOT NULL DEFAULT 'running',
        config TEXT,
        config_hash TEXT,
        git_revision TEXT,
        host TEXT,
        world_size INTEGER,
        slurm_job_id TEXT,
        slurm_array_id TEXT,
        attempt INTEGER NOT NULL DEFAULT 0,
        started_at REAL NOT NULL,
        ended_at REAL,
        UNIQUE (experiment_id, name)
      );
      CREATE INDEX runs_sweep ON runs(sweep, row_index);
      CREATE TABLE params (
        run_id INTEGER NOT NULL REFERENCES runs(id),
        key TEXT NOT NULL,
        value_text TEXT,
        value_num REAL,
        PRIMARY KEY (run_id, key)
      ) WITHOUT ROWID;
      CREATE TABLE metrics (
        run_id INTEGER NOT NULL REFERENCES runs(id),
        key TEXT NOT NULL,
        step INTEGER NOT NULL,
        value REAL NOT NULL,
        wall_time REAL NOT NULL,
        rank INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX metrics_series ON metrics(run_id, key, step);
      -- One row per acknowledged batch: a retried batch (same run, rank, sequence) is skipped.
      CREATE TABLE ingested_batches (
        run_id INTEGER NOT NULL REFERENCES runs(id),
        rank INTEGER NOT NULL,
        sequence INTEGER NOT NULL,
        PRIMARY KEY (run_id, rank, sequence)
      ) WITHOUT ROWID;
      CREATE TABLE evals (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id),
        checkpoint TEXT,
        step INTEGER,
        split TEXT NOT NULL,
        bleu REAL,
        chrf REAL,
        perplexity REAL,
        signature TEXT,
        created_at REAL NOT NULL
      );
      CREATE TABLE artifacts (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs(id),
        kind TEXT NOT NULL,
        path TEXT NOT NULL,
        step INTEGER,
        averaged_from INTEGER,
        created_at REAL NOT NULL
      );
      )sql",
      // 2: GET /api/runs/{id} and the sweep table read evals and artifacts per run.
      R"sql(
      CREATE INDEX evals_run ON evals(run_id, split, id);
      CREATE INDEX artifacts_run ON artifacts(run_id);
      )sql",
  };
  return kMigrations;
}

}  // namespace

int latest_schema_version() {
  return static_cast<int>(migrations().size());
}

void migrate(SQLite::Database& db, const std::string& path) {
  const int current = db.execAndGet("PRAGMA user_version").getInt();
  if (current > latest_schema_version()) {
    throw std::runtime_error(fmt::format(
        "{}: schema version {} is newer than this build understands ({}); use a newer nmt-trackerd",
        path, current, latest_schema_version()));
  }
  for (int version = current; version < latest_schema_version(); ++version) {
    SQLite::Transaction transaction(db);
    db.exec(migrations()[static_cast<std::size_t>(version)]);
    db.exec(fmt::format("PRAGMA user_version = {}", version + 1));
    transaction.commit();
  }
}

}  // namespace nmt::tracker
