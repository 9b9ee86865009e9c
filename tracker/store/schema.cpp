#include "tracker/store/schema.h"

#include <SQLiteCpp/Statement.h>
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
      // 3: runs are identified by a client-generated uid, never merged by name: `runs`
      // is rebuilt without UNIQUE (experiment_id, name) and with `uid` (NULL for older runs), and
      // every attempt of a run gets a row. The rebuild follows SQLite's "making other kinds of
      // table schema changes" recipe; migrate() turns foreign keys off around it, since dropping
      // the old `runs` would otherwise cascade into a constraint failure on every child table.
      // Runs migrated from version 2 get one attempts row, their current attempt, with the run's
      // started_at: earlier attempts were never recorded.
      R"sql(
      CREATE TABLE runs_v3 (
        id INTEGER PRIMARY KEY,
        experiment_id INTEGER NOT NULL REFERENCES experiments(id),
        name TEXT NOT NULL,
        uid TEXT UNIQUE,
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
        attempt INTEGER NOT NULL DEFAULT 1,
        started_at REAL NOT NULL,
        ended_at REAL
      );
      INSERT INTO runs_v3(id, experiment_id, name, uid, sweep, row_label, row_index, status,
                          config, config_hash, git_revision, host, world_size, slurm_job_id,
                          slurm_array_id, attempt, started_at, ended_at)
        SELECT id, experiment_id, name, NULL, sweep, row_label, row_index, status, config,
               config_hash, git_revision, host, world_size, slurm_job_id, slurm_array_id,
               MAX(attempt, 1), started_at, ended_at
        FROM runs;
      DROP TABLE runs;
      ALTER TABLE runs_v3 RENAME TO runs;
      CREATE INDEX runs_sweep ON runs(sweep, row_index);
      -- Took the place of the UNIQUE constraint's index: listings by experiment and name.
      CREATE INDEX runs_experiment ON runs(experiment_id, name);
      CREATE TABLE run_attempts (
        run_id INTEGER NOT NULL REFERENCES runs(id),
        attempt INTEGER NOT NULL,
        started_at REAL NOT NULL,
        ended_at REAL,
        status TEXT NOT NULL,
        host TEXT,
        world_size INTEGER,
        slurm_job_id TEXT,
        slurm_array_id TEXT,
        PRIMARY KEY (run_id, attempt)
      ) WITHOUT ROWID;
      INSERT INTO run_attempts(run_id, attempt, started_at, ended_at, status, host, world_size,
                               slurm_job_id, slurm_array_id)
        SELECT id, attempt, started_at, ended_at, status, host, world_size, slurm_job_id,
               slurm_array_id
        FROM runs;
      )sql",
      // 4: soft delete (DELETE /api/runs/{id} sets deleted_at, restore clears it), and lookups
      // of runs by their exact name. The newest value per (run, key) that listings with
      // metrics=... show needs no index of its own: metrics_series(run_id, key, step) answers
      // MAX(step) and the next key of a run by seeks (run_queries.cpp).
      R"sql(
      ALTER TABLE runs ADD COLUMN deleted_at REAL;
      CREATE INDEX runs_name ON runs(name);
      )sql",
      // 5: one point per (run, key, step), the latest delivered: a resumed trainer re-logs the
      // steps after its checkpoint and re-sends points the daemon may already hold, and ingest
      // upserts on this key. Of the duplicates older builds stored, the newest row (highest rowid)
      // is kept. metrics_series becomes unique under the same name and columns; it serves every
      // query it served before (the series, MAX(step), the next key of a run) and the series'
      // ORDER BY step without a sort.
      R"sql(
      DELETE FROM metrics WHERE EXISTS (
        SELECT 1 FROM metrics newer
        WHERE newer.run_id = metrics.run_id AND newer.key = metrics.key
          AND newer.step = metrics.step AND newer.rowid > metrics.rowid);
      DROP INDEX metrics_series;
      CREATE UNIQUE INDEX metrics_series ON metrics(run_id, key, step);
      )sql",
      // 6: the text of a text artifact (a Markdown report, an SVG chart), served on its own
      // route; NULL for every artifact recorded before and for binary files.
      R"sql(
      ALTER TABLE artifacts ADD COLUMN content TEXT;
      )sql",
      // 7: each attempt's run directory and provenance (a JSON object of flat keys, as the
      // registration sent it); NULL for attempts recorded before and for clients that send none.
      R"sql(
      ALTER TABLE run_attempts ADD COLUMN run_dir TEXT;
      ALTER TABLE run_attempts ADD COLUMN provenance TEXT;
      )sql",
      // 8: each attempt's last contact (registration, heartbeat, status), from which the daemon
      // finds attempts silent for too long. Attempts running at the upgrade count from it; the
      // partial index keeps the daemon's look at running attempts off the ended ones.
      R"sql(
      ALTER TABLE run_attempts ADD COLUMN last_contact_at REAL;
      UPDATE run_attempts SET last_contact_at = CAST(strftime('%s', 'now') AS REAL)
        WHERE status = 'running';
      CREATE INDEX run_attempts_running ON run_attempts(status) WHERE status = 'running';
      )sql",
  };
  return kMigrations;
}

// Foreign keys off for its lifetime, back to what they were afterwards (also on an exception).
class ForeignKeysOff {
 public:
  explicit ForeignKeysOff(SQLite::Database& db)
      : db_(db), was_on_(db.execAndGet("PRAGMA foreign_keys").getInt() != 0) {
    db_.exec("PRAGMA foreign_keys = OFF");
  }
  ~ForeignKeysOff() {
    if (was_on_) {
      db_.tryExec("PRAGMA foreign_keys = ON");
    }
  }
  ForeignKeysOff(const ForeignKeysOff&) = delete;
  ForeignKeysOff& operator=(const ForeignKeysOff&) = delete;

 private:
  SQLite::Database& db_;
  bool was_on_;
};

}  // namespace

int latest_schema_version() {
  return static_cast<int>(migrations().size());
}

void migrate(SQLite::Database& db, const std::string& path) {
  migrate_to(db, path, latest_schema_version());
}

void migrate_to(SQLite::Database& db, const std::string& path, int target) {
  const int current = db.execAndGet("PRAGMA user_version").getInt();
  if (current > latest_schema_version()) {
    throw std::runtime_error(fmt::format(
        "{}: schema version {} is newer than this build understands ({}); use a newer nmt-trackerd",
        path, current, latest_schema_version()));
  }
  if (target < 0 || target > latest_schema_version()) {
    throw std::invalid_argument(
        fmt::format("schema version {} is not between 0 and {}", target, latest_schema_version()));
  }
  if (current >= target) {
    return;
  }
  // A table rebuild drops a parent table, which foreign keys forbid; the pragma is a no-op inside a
  // transaction, so it is set around them, and the constraints are checked before each commit.
  const ForeignKeysOff foreign_keys_off(db);
  for (int version = current; version < target; ++version) {
    SQLite::Transaction transaction(db);
    db.exec(migrations()[static_cast<std::size_t>(version)]);
    SQLite::Statement check(db, "PRAGMA foreign_key_check");
    if (check.executeStep()) {
      throw std::runtime_error(fmt::format(
          "{}: migration to schema version {} leaves a row of '{}' without its parent in '{}'; "
          "the database is left at version {}",
          path, version + 1, check.getColumn(0).getString(), check.getColumn(2).getString(),
          version));
    }
    db.exec(fmt::format("PRAGMA user_version = {}", version + 1));
    transaction.commit();
  }
}

}  // namespace nmt::tracker
