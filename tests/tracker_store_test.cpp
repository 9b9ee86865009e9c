// The tracker's SQLite store: a real database file in WAL mode, migrated to the current schema,
// surviving a reopen; a file from a newer build is refused; a file from an older build upgraded
// with its data. RunStore's own promises: typed errors, all-or-nothing batches, exact
// downsampling buckets, one point per run, key and step (the latest delivered), earlier attempts
// still running marked crashed when the run resumes.

#include "tracker/store/database.h"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>
#include <sys/stat.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "test_utils.h"
#include "tracker/store/run_store.h"
#include "tracker/store/schema.h"

namespace nmt::tracker {
namespace {

using testing::TempDir;

// What most store tests start from: a fresh database at the latest schema, its store, and the spec
// of run "r" in experiment "e" (not yet created).
struct FreshStore {
  TempDir dir;
  Database db{dir.file("tracker.db")};
  RunStore store{db};
  RunSpec spec = [] {
    RunSpec s;
    s.experiment = "e";
    s.name = "r";
    return s;
  }();
};

TEST(TrackerStore, CreatesWalDatabaseAtLatestSchema) {
  TempDir dir;
  Database db(dir.file("tracker.db"));
  EXPECT_EQ(db.journal_mode(), "wal");
  EXPECT_EQ(db.schema_version(), latest_schema_version());
  EXPECT_GE(latest_schema_version(), 1);
}

// The database holds configs and host names; its WAL and shared-memory files take its mode.
TEST(TrackerStore, DatabaseFilesAreOwnerOnly) {
  TempDir dir;
  const mode_t previous = ::umask(022);
  {
    Database db(dir.file("tracker.db"));
    RunStore store(db);
    RunSpec spec;
    spec.experiment = "e";
    spec.name = "r";
    store.create_or_resume_run(spec);
    for (const char* name : {"tracker.db", "tracker.db-wal", "tracker.db-shm"}) {
      struct stat info {};
      ASSERT_EQ(::stat(dir.file(name).c_str(), &info), 0) << name;
      EXPECT_EQ(info.st_mode & 0777, 0600u) << name;
    }
  }
  ::umask(previous);
}

TEST(TrackerStore, MetricsRoundTripAcrossReopen) {
  TempDir dir;
  const auto path = dir.file("tracker.db");
  {
    Database db(path);
    auto& sql = db.sqlite();
    SQLite::Transaction tx(sql);
    sql.exec("INSERT INTO experiments(name, created_at) VALUES ('wmt14', 1.0)");
    SQLite::Statement run(sql,
                          "INSERT INTO runs(experiment_id, name, started_at) VALUES (?, ?, 2.0)");
    run.bind(1, sql.getLastInsertRowid());
    run.bind(2, "base'; DROP TABLE runs; --");
    run.exec();
    const auto run_id = sql.getLastInsertRowid();
    SQLite::Statement metric(
        sql,
        "INSERT INTO metrics(run_id, key, step, value, wall_time) VALUES (?, 'loss', ?, ?, 0)");
    for (int step = 1; step <= 100; ++step) {
      metric.bind(1, run_id);
      metric.bind(2, step);
      metric.bind(3, 10.0 / step);
      metric.exec();
      metric.reset();
    }
    tx.commit();
  }
  Database db(path);
  auto& sql = db.sqlite();
  EXPECT_EQ(sql.execAndGet("SELECT name FROM runs").getString(), "base'; DROP TABLE runs; --");
  EXPECT_EQ(sql.execAndGet("SELECT COUNT(*) FROM metrics WHERE key = 'loss'").getInt(), 100);
  EXPECT_DOUBLE_EQ(sql.execAndGet("SELECT value FROM metrics WHERE step = 4").getDouble(), 2.5);
  EXPECT_DOUBLE_EQ(sql.execAndGet("SELECT SUM(step) FROM metrics").getDouble(), 5050.0);
}

TEST(TrackerStore, DuplicateBatchSequenceIsRejectedByKey) {
  TempDir dir;
  Database db(dir.file("tracker.db"));
  auto& sql = db.sqlite();
  sql.exec("INSERT INTO experiments(name, created_at) VALUES ('e', 0)");
  sql.exec("INSERT INTO runs(experiment_id, name, started_at) VALUES (1, 'r', 0)");
  sql.exec("INSERT INTO ingested_batches VALUES (1, 0, 7)");
  EXPECT_THROW(sql.exec("INSERT INTO ingested_batches VALUES (1, 0, 7)"), SQLite::Exception);
  EXPECT_EQ(sql.exec("INSERT OR IGNORE INTO ingested_batches VALUES (1, 0, 7)"), 0);
}

TEST(TrackerStore, RefusesNewerSchemaAndNonDatabaseFiles) {
  TempDir dir;
  const auto path = dir.file("future.db");
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    raw.exec("PRAGMA user_version = 999");
  }
  NMT_EXPECT_THROW_WITH(Database db(path), std::runtime_error, "future.db", "schema version 999");
  const auto junk = dir.file("junk.db");
  testing::write_text(junk, std::string(4096, 'x'));
  NMT_EXPECT_THROW_WITH(Database db(junk), std::runtime_error, "junk.db");
}

TEST(TrackerStore, UpgradesVersionOneDatabaseInPlace) {
  TempDir dir;
  const auto path = dir.file("tracker.db");
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    migrate_to(raw, path, 1);
    ASSERT_EQ(
        raw.execAndGet("SELECT COUNT(*) FROM sqlite_master WHERE name = 'evals_run'").getInt(), 0);
  }
  Database db(path);
  EXPECT_EQ(db.schema_version(), latest_schema_version());
  EXPECT_EQ(db.sqlite()
                .execAndGet("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND "
                            "name IN ('evals_run', 'artifacts_run')")
                .getInt(),
            2);
}

// Issue 16's migration: a database as version 2 left it (runs unique by experiment and name) keeps
// every row, loses the uniqueness, gains uid and one attempts row per run, keeps its indexes and
// its foreign keys.
TEST(TrackerStore, UpgradesVersionTwoDatabaseKeepingEveryRun) {
  TempDir dir;
  const auto path = dir.file("tracker.db");
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    raw.exec("PRAGMA foreign_keys = ON");
    migrate_to(raw, path, 2);
    ASSERT_EQ(raw.execAndGet("PRAGMA user_version").getInt(), 2);
    raw.exec(R"sql(
      INSERT INTO experiments VALUES (1, 'wmt14', 1.0);
      INSERT INTO runs(id, experiment_id, name, sweep, row_index, status, host, world_size,
                       slurm_job_id, attempt, started_at, ended_at)
        VALUES (1, 1, 'tiny', 'S', 0, 'failed', 'node1', 4, '77', 2, 10.0, 20.0),
               (2, 1, 'base', NULL, NULL, 'running', NULL, NULL, NULL, 1, 30.0, NULL);
      INSERT INTO params VALUES (1, 'model.dropout', NULL, 0.1), (2, 'model.dropout', NULL, 0.3);
      INSERT INTO metrics(run_id, key, step, value, wall_time) VALUES (1, 'loss', 1, 5.0, 11.0),
                                                                      (2, 'loss', 1, 6.0, 31.0);
      INSERT INTO ingested_batches VALUES (1, 0, 7);
      INSERT INTO evals(run_id, split, bleu, created_at) VALUES (1, 'test', 25.8, 19.0);
    )sql");
    // The schema 2 constraint: one run per (experiment, name).
    EXPECT_THROW(
        raw.exec("INSERT INTO runs(experiment_id, name, started_at) VALUES (1, 'tiny', 0)"),
        SQLite::Exception);
  }
  Database db(path);
  EXPECT_EQ(db.schema_version(), latest_schema_version());
  auto& sql = db.sqlite();
  EXPECT_EQ(sql.execAndGet("SELECT COUNT(*) FROM runs WHERE uid IS NULL").getInt(), 2);
  EXPECT_EQ(sql.execAndGet("SELECT COUNT(*) FROM metrics").getInt(), 2);
  EXPECT_EQ(sql.execAndGet("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name IN "
                           "('runs_sweep', 'runs_experiment', 'evals_run', 'artifacts_run')")
                .getInt(),
            4);
  EXPECT_EQ(sql.execAndGet("PRAGMA foreign_keys").getInt(), 1);  // back on after the rebuild
  EXPECT_THROW(sql.exec("INSERT INTO params VALUES (99, 'x', 'y', NULL)"), SQLite::Exception);

  RunStore store(db);
  const api::RunDetail tiny = store.get_run(1);
  EXPECT_EQ(tiny.summary.name, "tiny");
  EXPECT_EQ(tiny.summary.status, "failed");
  EXPECT_EQ(tiny.summary.attempt, 2);
  EXPECT_EQ(tiny.summary.world_size, 4);
  EXPECT_FALSE(tiny.summary.uid.has_value());
  EXPECT_FALSE(tiny.summary.deleted_at.has_value());  // version 4's column, NULL for old runs
  EXPECT_DOUBLE_EQ(std::get<double>(tiny.params.at("model.dropout")), 0.1);
  EXPECT_EQ(tiny.evals.size(), 1u);
  // Only the current attempt was known to version 2.
  ASSERT_EQ(tiny.attempts.size(), 1u);
  EXPECT_EQ(tiny.summary.attempts, 1);
  EXPECT_EQ(tiny.attempts[0].attempt, 2);
  EXPECT_EQ(tiny.attempts[0].status, "failed");
  EXPECT_EQ(tiny.attempts[0].slurm_job_id, "77");
  EXPECT_DOUBLE_EQ(*tiny.attempts[0].ended_at, 20.0);
  EXPECT_DOUBLE_EQ(tiny.summary.duration_s, 10.0);
  EXPECT_EQ(store.metric_series(2, "loss", std::nullopt, std::nullopt).points.size(), 1u);
  EXPECT_TRUE(store.ingest_metrics(1, 0, 7, {{"loss", 2, 1.0, std::nullopt}}).duplicate);
  EXPECT_EQ(store.sweep_runs("S").size(), 1u);

  // The same name is a new run now; a uid is unique.
  RunSpec spec;
  spec.experiment = "wmt14";
  spec.name = "tiny";
  spec.uid = "after-migration";
  const RunHandle fresh = store.create_or_resume_run(spec);
  EXPECT_EQ(fresh.run_id, 3);
  EXPECT_FALSE(fresh.resumed);
  EXPECT_THROW(sql.exec("UPDATE runs SET uid = 'after-migration' WHERE id = 1"), SQLite::Exception);
  store.set_status(1, "preempted");
  EXPECT_EQ(store.get_run(1).attempts[0].status, "preempted");
}

TEST(TrackerStore, RunStoreThrowsNotFoundAndInvalidArgument) {
  TempDir dir;
  Database db(dir.file("tracker.db"));
  RunStore store(db);
  NMT_EXPECT_THROW_WITH(store.get_run(42), NotFound, "unknown run 42");
  NMT_EXPECT_THROW_WITH(store.set_status(42, "finished"), NotFound, "42");
  NMT_EXPECT_THROW_WITH(store.ingest_metrics(42, 0, 0, {}), NotFound, "42");
  EvalRecord eval;
  eval.split = "test";
  NMT_EXPECT_THROW_WITH(store.log_eval(42, eval), NotFound, "42");
  NMT_EXPECT_THROW_WITH(store.sweep_runs("none"), NotFound, "none");
  NMT_EXPECT_THROW_WITH(store.set_deleted(42, true), NotFound, "42");
  RunSpec spec;
  spec.experiment = "e";
  NMT_EXPECT_THROW_WITH(store.create_or_resume_run(spec), std::invalid_argument, "run name");
  spec.name = "r";
  spec.params = {{"model.d_model", std::nan("")}};
  NMT_EXPECT_THROW_WITH(store.create_or_resume_run(spec), std::invalid_argument, "model.d_model");
  spec.params = {{"", 512.0}};
  NMT_EXPECT_THROW_WITH(store.create_or_resume_run(spec), std::invalid_argument, "empty key");
  spec.params = {{"model.d_model", 512.0}};
  spec.uid = "no spaces";
  NMT_EXPECT_THROW_WITH(store.create_or_resume_run(spec), std::invalid_argument, "uid");
  spec.uid = "good-uid";
  spec.attempt = 0;
  NMT_EXPECT_THROW_WITH(store.create_or_resume_run(spec), std::invalid_argument, "attempt");
  spec.attempt = 1;
  const RunHandle run = store.create_or_resume_run(spec);
  NMT_EXPECT_THROW_WITH(store.set_status(run.run_id, "paused"), std::invalid_argument, "paused");
  NMT_EXPECT_THROW_WITH(store.metric_series(run.run_id, "loss", 0, std::nullopt),
                        std::invalid_argument, "max_points");
  EXPECT_EQ(store.get_run(run.run_id).summary.status, "running");
}

TEST(TrackerStore, RejectedBatchWritesNothingAndKeepsItsSequence) {
  FreshStore fresh;
  auto& [dir, db, store, spec] = fresh;
  const auto run_id = store.create_or_resume_run(spec).run_id;
  std::vector<MetricPoint> points = {{"loss", 1, 2.0, std::nullopt},
                                     {"loss", 2, std::nan(""), std::nullopt},
                                     {"loss", 3, 1.0, 123.0}};
  NMT_EXPECT_THROW_WITH(store.ingest_metrics(run_id, 0, 5, points), std::invalid_argument,
                        "points[1]");
  EXPECT_EQ(db.sqlite().execAndGet("SELECT COUNT(*) FROM metrics").getInt(), 0);
  points[1].value = 1.5;
  const IngestResult result = store.ingest_metrics(run_id, 0, 5, points);
  EXPECT_EQ(result.stored, 3);
  EXPECT_FALSE(result.duplicate);
  EXPECT_TRUE(store.ingest_metrics(run_id, 0, 5, points).duplicate);
  const auto series = store.metric_series(run_id, "loss", std::nullopt, std::nullopt);
  ASSERT_EQ(series.points.size(), 3u);
  EXPECT_DOUBLE_EQ(series.points[2].time, 123.0);
}

TEST(TrackerStore, DownsamplingAveragesEqualStepBuckets) {
  FreshStore fresh;
  auto& [dir, db, store, spec] = fresh;
  const auto run_id = store.create_or_resume_run(spec).run_id;
  std::vector<MetricPoint> points;
  for (int step = 1; step <= 10; ++step) {
    points.push_back({"bleu", step, static_cast<double>(step), std::nullopt});
  }
  store.ingest_metrics(run_id, 0, 0, points);
  const auto series = store.metric_series(run_id, "bleu", 5, 0).points;
  ASSERT_EQ(series.size(), 5u);
  for (int i = 0; i < 5; ++i) {  // buckets {1,2}, {3,4}, ... of two steps each
    EXPECT_EQ(series[i].step, 2 * i + 1);
    EXPECT_DOUBLE_EQ(series[i].value, 2 * i + 1.5);
    EXPECT_DOUBLE_EQ(series[i].min, 2 * i + 1);
    EXPECT_DOUBLE_EQ(series[i].max, 2 * i + 2);
    EXPECT_EQ(series[i].rank, 0);
  }
  EXPECT_TRUE(store.metric_series(run_id, "bleu", 5, 1).points.empty());
  // The answer says whether it was downsampled, and from how many points.
  const auto bucketed = store.metric_series(run_id, "bleu", 5, 0);
  EXPECT_TRUE(bucketed.downsampled);
  EXPECT_EQ(bucketed.total_points, 10);
  const auto whole = store.metric_series(run_id, "bleu", 10, 0);
  EXPECT_FALSE(whole.downsampled);
  EXPECT_EQ(whole.total_points, 10);
  // The newest point is exact either way (the last bucket's mean is 9.5).
  ASSERT_TRUE(bucketed.last.has_value());
  EXPECT_EQ(bucketed.last->step, 10);
  EXPECT_DOUBLE_EQ(bucketed.last->value, 10.0);
  ASSERT_TRUE(whole.last.has_value());
  EXPECT_EQ(whole.last->step, bucketed.last->step);
  EXPECT_EQ(whole.last->time, bucketed.last->time);
  EXPECT_FALSE(store.metric_series(run_id, "bleu", 5, 1).last.has_value()) << "no rank 1";
}

// Soft delete hides a run from listings and sweeps, keeps it readable, and restore brings it back.
TEST(TrackerStore, SoftDeleteHidesAndRestoreShows) {
  FreshStore fresh;
  auto& [dir, db, store, spec] = fresh;
  spec.sweep = "S";
  const auto a = store.create_or_resume_run(spec).run_id;
  const auto b = store.create_or_resume_run(spec).run_id;
  store.set_deleted(a, true);
  const double deleted_at = *store.get_run(a).summary.deleted_at;
  store.set_deleted(a, true);  // deleting again keeps the first time
  EXPECT_EQ(*store.get_run(a).summary.deleted_at, deleted_at);
  api::RunQuery query;
  ASSERT_EQ(store.list_runs(query).size(), 1u);
  EXPECT_EQ(store.list_runs(query)[0].run_id, b);
  query.deleted = api::DeletedRuns::kOnly;
  ASSERT_EQ(store.list_runs(query).size(), 1u);
  EXPECT_EQ(store.list_runs(query)[0].run_id, a);
  query.deleted = api::DeletedRuns::kAll;
  EXPECT_EQ(store.list_runs(query).size(), 2u);
  EXPECT_EQ(store.sweep_runs("S").size(), 1u);
  ASSERT_EQ(store.list_sweeps().size(), 1u);
  EXPECT_EQ(store.list_sweeps()[0].runs, 1);
  store.set_deleted(b, true);
  EXPECT_THROW(store.sweep_runs("S"), NotFound);
  EXPECT_TRUE(store.list_sweeps().empty());
  store.set_deleted(a, false);
  EXPECT_FALSE(store.get_run(a).summary.deleted_at.has_value());
  EXPECT_EQ(store.sweep_runs("S").size(), 1u);
}

// A version 3 database gains deleted_at (NULL: nothing is deleted by the upgrade).
TEST(TrackerStore, UpgradesVersionThreeDatabaseWithDeletedAt) {
  TempDir dir;
  const std::string path = dir.file("tracker.db");
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    migrate_to(raw, path, 3);
    raw.exec("INSERT INTO experiments VALUES (1, 'e', 0.0)");
    raw.exec(
        "INSERT INTO runs(id, experiment_id, name, status, started_at) "
        "VALUES (1, 1, 'old', 'finished', 5.0)");
  }
  Database db(path);
  EXPECT_EQ(db.schema_version(), latest_schema_version());
  RunStore store(db);
  const auto runs = store.list_runs({});
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_FALSE(runs[0].deleted_at.has_value());
  EXPECT_EQ(runs[0].attempts, 0);  // version 3 wrote no attempts row for a run inserted by hand
}

// The newest value per (run, key) for listings, by index seeks: the last point is exact (the
// highest step's), and the query plan searches metrics_series rather than scanning.
TEST(TrackerStore, LastMetricValuesUseTheSeriesIndex) {
  FreshStore fresh;
  auto& [dir, db, store, spec] = fresh;
  const auto run = store.create_or_resume_run(spec).run_id;
  store.ingest_metrics(run, 1, 0,
                       {{"loss", 5, 1.5, std::nullopt}, {"bleu", 2, 20.0, std::nullopt}});
  store.ingest_metrics(run, 0, 0, {{"loss", 5, 1.0, std::nullopt}, {"loss", 4, 3.0, std::nullopt}});
  api::RunQuery query;
  query.metrics = api::KeySelection{true, {}};
  const auto all = store.list_runs(query);
  ASSERT_EQ(all.size(), 1u);
  ASSERT_TRUE(all[0].last_metrics.has_value());
  EXPECT_EQ(all[0].last_metrics->size(), 2u);
  EXPECT_DOUBLE_EQ(all[0].last_metrics->at("loss"), 1.0);  // step 5 as delivered last (rank 0)
  EXPECT_DOUBLE_EQ(all[0].last_metrics->at("bleu"), 20.0);
  query.metrics = api::KeySelection{false, {"bleu", "missing"}};
  const auto some = store.list_runs(query);
  EXPECT_EQ(some[0].last_metrics->size(), 1u) << "a key the run lacks is absent";

  auto plan = [&sqlite = db.sqlite()](const std::string& sql) {
    SQLite::Statement explain(sqlite, "EXPLAIN QUERY PLAN " + sql);
    std::string text;
    while (explain.executeStep()) text += explain.getColumn(3).getString() + "\n";
    return text;
  };
  const std::string last = plan(
      "SELECT step, value, rank, wall_time FROM metrics WHERE run_id = 1 AND key = 'loss' AND "
      "step = (SELECT MAX(step) FROM metrics WHERE run_id = 1 AND key = 'loss') "
      "ORDER BY rank, rowid DESC LIMIT 1");
  EXPECT_NE(last.find("USING INDEX metrics_series"), std::string::npos) << last;
  EXPECT_EQ(last.find("SCAN metrics"), std::string::npos) << last;
  const std::string next_key =
      plan("SELECT MIN(key) FROM metrics WHERE run_id = 1 AND key > 'bleu'");
  EXPECT_NE(next_key.find("USING COVERING INDEX metrics_series"), std::string::npos) << next_key;
}

// A resumed trainer re-logs the steps after its checkpoint, in batches of new sequences: each
// (run, key, step) keeps one point, the latest delivered (its value, time and rank).
TEST(TrackerStore, SameKeyAndStepKeepsOnePointWithTheLatestValue) {
  FreshStore fresh;
  auto& [dir, db, store, spec] = fresh;
  const auto run = store.create_or_resume_run(spec).run_id;
  store.ingest_metrics(run, 0, 0,
                       {{"loss", 1, 4.0, 10.0}, {"loss", 2, 3.0, 11.0}, {"bleu", 2, 5.0, 11.0}});
  const IngestResult second =
      store.ingest_metrics(run, 1, 1, {{"loss", 2, 2.5, 20.0}, {"loss", 3, 2.0, 21.0}});
  EXPECT_EQ(second.stored, 2);
  EXPECT_FALSE(second.duplicate);
  const auto series = store.metric_series(run, "loss", std::nullopt, std::nullopt);
  EXPECT_EQ(series.total_points, 3);
  ASSERT_EQ(series.points.size(), 3u);
  EXPECT_EQ(series.points[1].step, 2);
  EXPECT_DOUBLE_EQ(series.points[1].value, 2.5);
  EXPECT_DOUBLE_EQ(series.points[1].time, 20.0);
  EXPECT_EQ(series.points[1].rank, 1);
  EXPECT_DOUBLE_EQ(series.points[0].value, 4.0);  // steps sent once are kept as sent
  EXPECT_EQ(store.metric_series(run, "bleu", std::nullopt, std::nullopt).total_points, 1);
  // Within one batch too, the later point of a step wins.
  store.ingest_metrics(run, 0, 2, {{"loss", 3, 1.75, 30.0}, {"loss", 3, 1.5, 31.0}});
  EXPECT_EQ(db.sqlite().execAndGet("SELECT COUNT(*) FROM metrics WHERE key = 'loss'").getInt(), 3);
  const auto last = store.metric_series(run, "loss", std::nullopt, std::nullopt).last;
  ASSERT_TRUE(last.has_value());
  EXPECT_DOUBLE_EQ(last->value, 1.5);
  EXPECT_EQ(last->rank, 0);
  // The batch-level dedupe is unchanged: a retried batch stores nothing, even its new values.
  const IngestResult retry = store.ingest_metrics(run, 1, 1, {{"loss", 2, 99.0, 40.0}});
  EXPECT_TRUE(retry.duplicate);
  EXPECT_DOUBLE_EQ(store.metric_series(run, "loss", std::nullopt, std::nullopt).points[1].value,
                   2.5);
}

// An eval or artifact delivered twice (a spool replayed, a run synced again) is one record: the
// same id, no second row; anything that differs is a record of its own.
TEST(TrackerStore, IdenticalEvalIsOneRow) {
  FreshStore fresh;
  auto& [dir, db, store, spec] = fresh;
  const auto run = store.create_or_resume_run(spec).run_id;
  EvalRecord eval;
  eval.split = "valid";
  eval.step = 6;
  eval.checkpoint = "checkpoints/step-00000006.h5";
  eval.bleu = 25.8;
  eval.perplexity = 4.92;  // chrf and signature absent: NULL matches only NULL
  const auto first = store.log_eval(run, eval);
  EXPECT_EQ(store.log_eval(run, eval), first);
  EXPECT_EQ(db.sqlite().execAndGet("SELECT COUNT(*) FROM evals").getInt(), 1);
  auto other = eval;
  other.signature = "nmt-evaluate|beam:4|alpha:0.6";
  EXPECT_NE(store.log_eval(run, other), first);
  other = eval;
  other.bleu = 25.9;
  EXPECT_NE(store.log_eval(run, other), first);
  auto other_spec = spec;
  other_spec.name = "r2";
  const auto second_run = store.create_or_resume_run(other_spec).run_id;
  EXPECT_NE(store.log_eval(second_run, eval), first);
  EXPECT_EQ(db.sqlite().execAndGet("SELECT COUNT(*) FROM evals").getInt(), 4);
}

TEST(TrackerStore, ArtifactWithSameKindPathAndStepIsOneRow) {
  FreshStore fresh;
  auto& [dir, db, store, spec] = fresh;
  const auto run = store.create_or_resume_run(spec).run_id;
  const ArtifactRecord checkpoint{"checkpoint", "/runs/r/checkpoints/step-00000002.h5", 2,
                                  std::nullopt};
  const auto id = store.log_artifact(run, checkpoint);
  EXPECT_EQ(store.log_artifact(run, checkpoint), id);
  auto later = checkpoint;
  later.step = 4;
  EXPECT_NE(store.log_artifact(run, later), id);
  EXPECT_EQ(db.sqlite().execAndGet("SELECT COUNT(*) FROM artifacts").getInt(), 2);

  // A report sent again with new text is the same artifact with that text; sent without text,
  // it keeps what it has. created_at stays the first.
  ArtifactRecord report{"analysis", "/runs/r/analysis.md", std::nullopt, std::nullopt};
  report.content = "# first";
  const auto report_id = store.log_artifact(run, report);
  const std::string created_at =
      fmt::format("SELECT created_at FROM artifacts WHERE id = {}", report_id);
  const double created = db.sqlite().execAndGet(created_at).getDouble();
  report.content = "# second";
  EXPECT_EQ(store.log_artifact(run, report), report_id);
  EXPECT_EQ(store.artifact_content(run, report_id).content, "# second");
  report.content.reset();
  EXPECT_EQ(store.log_artifact(run, report), report_id);
  EXPECT_EQ(store.artifact_content(run, report_id).content, "# second");
  EXPECT_DOUBLE_EQ(db.sqlite().execAndGet(created_at).getDouble(), created);
  EXPECT_EQ(db.sqlite().execAndGet("SELECT COUNT(*) FROM artifacts").getInt(), 3);
}

// A version 4 database with repeated (run, key, step) rows keeps the newest row of each and gains
// the unique index, under which ingest upserts.
TEST(TrackerStore, UpgradesVersionFourDatabaseToOnePointPerStep) {
  TempDir dir;
  const std::string path = dir.file("tracker.db");
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    migrate_to(raw, path, 4);
    raw.exec(R"sql(
      INSERT INTO experiments VALUES (1, 'e', 0.0);
      INSERT INTO runs(id, experiment_id, name, started_at) VALUES (1, 1, 'a', 0.0),
                                                                   (2, 1, 'b', 0.0);
      INSERT INTO metrics(run_id, key, step, value, wall_time, rank) VALUES
        (1, 'loss', 1, 9.0, 1.0, 0), (1, 'loss', 2, 8.0, 2.0, 0),
        (1, 'loss', 1, 7.0, 3.0, 1), (1, 'bleu', 1, 5.0, 4.0, 0),
        (2, 'loss', 1, 6.0, 5.0, 0), (1, 'loss', 1, 4.0, 6.0, 0),
        (1, 'loss', 2, 3.0, 7.0, 2);
    )sql");
  }
  Database db(path);
  EXPECT_EQ(db.schema_version(), latest_schema_version());
  auto& sql = db.sqlite();
  SQLite::Statement rows(sql,
                         "SELECT run_id, key, step, value, wall_time, rank FROM metrics "
                         "ORDER BY run_id, key, step");
  std::vector<std::string> kept;
  while (rows.executeStep()) {
    kept.push_back(fmt::format("{} {} {} {} {} {}", rows.getColumn(0).getInt(),
                               rows.getColumn(1).getString(), rows.getColumn(2).getInt(),
                               rows.getColumn(3).getDouble(), rows.getColumn(4).getDouble(),
                               rows.getColumn(5).getInt()));
  }
  EXPECT_EQ(kept, (std::vector<std::string>{"1 bleu 1 5 4 0", "1 loss 1 4 6 0", "1 loss 2 3 7 2",
                                            "2 loss 1 6 5 0"}));
  EXPECT_EQ(sql.execAndGet("SELECT \"unique\" FROM pragma_index_list('metrics') "
                           "WHERE name = 'metrics_series'")
                .getInt(),
            1);
  EXPECT_THROW(sql.exec("INSERT INTO metrics(run_id, key, step, value, wall_time) "
                        "VALUES (1, 'loss', 1, 0.0, 0.0)"),
               SQLite::Exception);
  RunStore store(db);
  store.ingest_metrics(1, 0, 0, {{"loss", 1, 2.0, 8.0}});
  const auto series = store.metric_series(1, "loss", std::nullopt, std::nullopt);
  ASSERT_EQ(series.points.size(), 2u);
  EXPECT_DOUBLE_EQ(series.points[0].value, 2.0);
}

// Registers attempt 1 of run `uid`, then attempt 2 as a resumed job does (`spec` is left at
// attempt 2); returns the store's answers to both.
std::pair<RunHandle, RunHandle> register_two_attempts(RunStore& store, RunSpec& spec,
                                                      const std::string& uid) {
  spec.uid = uid;
  spec.attempt = 1;
  const RunHandle first = store.create_or_resume_run(spec);
  spec.attempt = 2;
  return {first, store.create_or_resume_run(spec)};
}

// Attempt 1 killed without a word (SIGKILL): when attempt 2 registers, attempt 1 is crashed, ended
// when attempt 2 started, and stays so when attempt 2 finishes. A replayed registration of the
// running attempt crashes nothing.
TEST(TrackerStore, ResumeMarksEarlierRunningAttemptsCrashed) {
  FreshStore fresh;
  auto& [dir, db, store, spec] = fresh;
  const auto [first, resumed] = register_two_attempts(store, spec, "crash-test-uid");
  const auto run = first.run_id;
  EXPECT_TRUE(resumed.resumed);
  api::RunDetail detail = store.get_run(run);
  EXPECT_EQ(detail.summary.status, "running");
  EXPECT_EQ(detail.summary.attempt, 2);
  EXPECT_FALSE(detail.summary.ended_at.has_value());
  ASSERT_EQ(detail.attempts.size(), 2u);
  EXPECT_EQ(detail.attempts[0].status, "crashed");
  ASSERT_TRUE(detail.attempts[0].ended_at.has_value());
  EXPECT_DOUBLE_EQ(*detail.attempts[0].ended_at, detail.attempts[1].started_at);
  EXPECT_EQ(detail.attempts[1].status, "running");
  EXPECT_FALSE(detail.attempts[1].ended_at.has_value());

  EXPECT_FALSE(store.create_or_resume_run(spec).resumed);  // replayed: attempt 2 still running
  EXPECT_EQ(store.get_run(run).attempts[1].status, "running");

  store.set_status(run, "finished");
  detail = store.get_run(run);
  EXPECT_EQ(detail.summary.status, "finished");
  EXPECT_EQ(detail.attempts[0].status, "crashed");
  EXPECT_EQ(detail.attempts[1].status, "finished");
  api::RunQuery crashed;
  crashed.status = "crashed";
  EXPECT_TRUE(store.list_runs(crashed).empty()) << "a run's status is its current attempt's";
}

// A status report of the crashed attempt, replayed late from its spool, is more precise than
// `crashed`: it replaces it on that attempt's row, and nothing of the run or the later attempt.
TEST(TrackerStore, LateStatusOfACrashedAttemptChangesOnlyItsRow) {
  FreshStore fresh;
  auto& [dir, db, store, spec] = fresh;
  const auto run = register_two_attempts(store, spec, "late-status-uid").first.run_id;
  const api::RunDetail before = store.get_run(run);
  ASSERT_EQ(before.attempts[0].status, "crashed");
  store.set_status(run, "preempted", 1);
  const api::RunDetail after = store.get_run(run);
  EXPECT_EQ(after.attempts[0].status, "preempted");
  ASSERT_TRUE(after.attempts[0].ended_at.has_value());
  EXPECT_EQ(after.summary.status, "running");
  EXPECT_EQ(after.summary.attempt, 2);
  EXPECT_FALSE(after.summary.ended_at.has_value());
  EXPECT_EQ(after.attempts[1].status, "running");
  EXPECT_FALSE(after.attempts[1].ended_at.has_value());
  // `crashed` is a status like the others: an operator may set it on the current attempt.
  store.set_status(run, "crashed");
  EXPECT_EQ(store.get_run(run).summary.status, "crashed");
  EXPECT_EQ(store.get_run(run).attempts[0].status, "preempted");
}

// An attempt silent for longer than the daemon allows is crashed, ended at its last contact; its
// heartbeat makes it running again. An attempt a later one replaced is not brought back, and an
// ended one is not touched.
TEST(TrackerStore, SilentAttemptsCrashAndTheirHeartbeatRevivesThem) {
  FreshStore fresh;
  auto& [dir, db, store, spec] = fresh;
  const auto run = store.create_or_resume_run(spec).run_id;
  RunSpec ended = spec;
  ended.name = "ended";
  const auto other = store.create_or_resume_run(ended).run_id;
  store.set_status(other, "finished");
  const api::HeartbeatAnswer beat = store.heartbeat(run, std::nullopt);
  EXPECT_EQ(beat.status, "running");
  EXPECT_EQ(beat.attempt, 1);
  const auto contact = store.get_run(run).attempts.at(0).last_contact_at;
  ASSERT_TRUE(contact.has_value());
  EXPECT_TRUE(store.mark_silent_attempts(3600).empty()) << "heard from a moment ago";

  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto silent = store.mark_silent_attempts(0.01);
  ASSERT_EQ(silent.size(), 1u) << "the finished run is not touched";
  EXPECT_EQ(silent[0].run_id, run);
  EXPECT_DOUBLE_EQ(silent[0].last_contact_at, *contact);
  api::RunDetail detail = store.get_run(run);
  EXPECT_EQ(detail.summary.status, "crashed");
  EXPECT_EQ(detail.attempts[0].status, "crashed");
  ASSERT_TRUE(detail.attempts[0].ended_at.has_value());
  EXPECT_DOUBLE_EQ(*detail.attempts[0].ended_at, *contact);
  EXPECT_DOUBLE_EQ(*detail.summary.ended_at, *contact);
  EXPECT_EQ(store.get_run(other).summary.status, "finished");

  EXPECT_EQ(store.heartbeat(run, 1).status, "running");
  detail = store.get_run(run);
  EXPECT_EQ(detail.summary.status, "running");
  EXPECT_EQ(detail.attempts[0].status, "running");
  EXPECT_FALSE(detail.summary.ended_at.has_value());
  EXPECT_FALSE(detail.attempts[0].ended_at.has_value());
  EXPECT_GT(*detail.attempts[0].last_contact_at, *contact);
  EXPECT_THROW(store.heartbeat(run, 9), NotFound);
  EXPECT_THROW(store.heartbeat(run + 100, std::nullopt), NotFound);
}

TEST(TrackerStore, AHeartbeatDoesNotReviveAnAttemptALaterOneReplaced) {
  FreshStore fresh;
  auto& [dir, db, store, spec] = fresh;
  const auto run = register_two_attempts(store, spec, "replaced-uid").first.run_id;
  EXPECT_EQ(store.heartbeat(run, 1).status, "crashed");
  const api::RunDetail detail = store.get_run(run);
  EXPECT_EQ(detail.attempts[0].status, "crashed");
  EXPECT_EQ(detail.summary.status, "running");
  EXPECT_EQ(detail.summary.attempt, 2);
}

// A version 5 database (artifacts without content) upgrades in place: its artifacts keep every
// field and have no content; new ones keep theirs, and the newest eval of each split is found.
TEST(TrackerStore, UpgradesVersionFiveDatabaseWithArtifactContent) {
  TempDir dir;
  const std::string path = dir.file("tracker.db");
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    migrate_to(raw, path, 5);
    raw.exec(R"sql(
      INSERT INTO experiments VALUES (1, 'e', 0.0);
      INSERT INTO runs(id, experiment_id, name, started_at) VALUES (1, 1, 'a', 0.0);
      INSERT INTO artifacts(id, run_id, kind, path, step, averaged_from, created_at)
        VALUES (4, 1, 'averaged', '/r/averaged.h5', 100, 5, 2.0);
      INSERT INTO evals(id, run_id, split, step, bleu, chrf, created_at) VALUES
        (1, 1, 'test', 100, 30.0, 55.0, 3.0), (2, 1, 'test', 90, 28.0, NULL, 2.0);
    )sql");
  }
  Database db(path);
  EXPECT_EQ(db.schema_version(), latest_schema_version());
  RunStore store(db);
  const auto old = store.get_run(1).artifacts;
  ASSERT_EQ(old.size(), 1u);
  EXPECT_EQ(old[0].artifact_id, 4);
  EXPECT_EQ(old[0].record.path, "/r/averaged.h5");
  EXPECT_EQ(old[0].record.averaged_from, 5);
  EXPECT_FALSE(old[0].has_content);
  EXPECT_EQ(store.artifact_content(1, 4).content, std::nullopt);

  ArtifactRecord report{"analysis", "/r/analysis.md", std::nullopt, std::nullopt, "# R\n"};
  const auto id = store.log_artifact(1, report);
  EXPECT_TRUE(store.get_run(1).artifacts.back().has_content);
  EXPECT_FALSE(store.get_run(1).artifacts.back().record.content) << "never sent with the run";
  EXPECT_EQ(store.artifact_content(1, id).content, "# R\n");
  EXPECT_THROW(store.artifact_content(1, id + 1), NotFound);
  EXPECT_THROW(store.artifact_content(2, id), NotFound);

  // Eval id 2 has the lower id but eval 1 was created later: the latest is eval 1.
  api::RunQuery query;
  query.evals = api::KeySelection{true, {}};
  const auto runs = store.list_runs(query);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].last_evals,
            (std::map<std::string, double>{{"test/bleu", 30.0}, {"test/chrf", 55.0}}));
}

// Each attempt keeps the run directory and provenance it registered with (a moved directory, a
// node with another GPU); a version 6 database's attempts upgrade with neither.
TEST(TrackerStore, EachAttemptKeepsItsRunDirectoryAndProvenance) {
  TempDir dir;
  const std::string path = dir.file("tracker.db");
  {
    SQLite::Database raw(path, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE);
    migrate_to(raw, path, 6);
    raw.exec(R"sql(
      INSERT INTO experiments VALUES (1, 'e', 0.0);
      INSERT INTO runs(id, experiment_id, name, uid, attempt, started_at)
        VALUES (1, 1, 'r', 'provenance-uid', 1, 0.0);
      INSERT INTO run_attempts(run_id, attempt, started_at, status, host)
        VALUES (1, 1, 0.0, 'preempted', 'node1');
    )sql");
  }
  Database db(path);
  RunStore store(db);
  RunSpec spec;
  spec.experiment = "e";
  spec.name = "r";
  spec.uid = "provenance-uid";
  spec.attempt = 2;
  spec.run_dir = "/scratch/runs/r";
  spec.provenance = {{"command_line", std::string("nmt-train --run-dir /scratch/runs/r")},
                     {"git.dirty", std::string("true")},
                     {"gpu", std::string("NVIDIA H200")},
                     {"world_size", 8.0}};
  EXPECT_TRUE(store.create_or_resume_run(spec).resumed);
  spec.attempt = 3;
  spec.run_dir = "/home/me/moved";
  spec.provenance = {{"gpu", std::string("NVIDIA H100")}};
  store.create_or_resume_run(spec);

  const auto attempts = store.get_run(1).attempts;
  ASSERT_EQ(attempts.size(), 3u);
  EXPECT_EQ(attempts[0].run_dir, std::nullopt);
  EXPECT_TRUE(attempts[0].provenance.empty());
  EXPECT_EQ(attempts[0].host, "node1");
  EXPECT_EQ(attempts[1].run_dir, "/scratch/runs/r");
  EXPECT_EQ(attempts[1].provenance,
            (api::Params{{"command_line", std::string("nmt-train --run-dir /scratch/runs/r")},
                         {"git.dirty", std::string("true")},
                         {"gpu", std::string("NVIDIA H200")},
                         {"world_size", 8.0}}));
  EXPECT_EQ(attempts[2].run_dir, "/home/me/moved");
  EXPECT_EQ(attempts[2].provenance, (api::Params{{"gpu", std::string("NVIDIA H100")}}));
}

// Buckets of width ceil(span / max_points) from the first step: each keeps its first step, the
// mean, min and max value, its rank only when one rank alone is in it, and its latest time.
TEST(TrackerStore, DownsampledBucketsKeepFirstStepMeanRangeRankAndLatestTime) {
  FreshStore fresh;
  auto& [dir, db, store, spec] = fresh;
  const auto run_id = store.create_or_resume_run(spec).run_id;
  store.ingest_metrics(run_id, 0, 1,
                       {{"loss", 3, 1.0, 10.0},
                        {"loss", 4, 2.0, 30.0},
                        {"loss", 5, 6.0, 20.0},
                        {"loss", 8, -2.0, 6.0}});
  store.ingest_metrics(run_id, 1, 1, {{"loss", 7, 4.0, 5.0}, {"loss", 14, 9.0, 1.0}});
  // Steps 3..14 in 4 buckets of width 3: {3, 4, 5}, {7, 8}, none, {14}.
  const auto series = store.metric_series(run_id, "loss", 4, std::nullopt);
  EXPECT_TRUE(series.downsampled);
  EXPECT_EQ(series.total_points, 6);
  ASSERT_EQ(series.points.size(), 3u);
  const auto expect_point = [](const api::SeriesPoint& p, std::int64_t step, double value,
                               double min, double max, std::optional<std::int64_t> rank,
                               double time) {
    EXPECT_EQ(p.step, step);
    EXPECT_DOUBLE_EQ(p.value, value) << step;
    EXPECT_EQ(p.min, min) << step;
    EXPECT_EQ(p.max, max) << step;
    EXPECT_EQ(p.rank, rank) << step;
    EXPECT_EQ(p.time, time) << step;
  };
  expect_point(series.points[0], 3, 3.0, 1.0, 6.0, 0, 30.0);
  expect_point(series.points[1], 7, 1.0, -2.0, 4.0, std::nullopt, 6.0);
  expect_point(series.points[2], 14, 9.0, 9.0, 9.0, 1, 1.0);
  ASSERT_TRUE(series.last.has_value());
  EXPECT_EQ(series.last->step, 14);

  // As many points as stored: each as it is, in step order.
  const auto whole = store.metric_series(run_id, "loss", 6, std::nullopt);
  EXPECT_FALSE(whole.downsampled);
  EXPECT_EQ(whole.total_points, 6);
  ASSERT_EQ(whole.points.size(), 6u);
  expect_point(whole.points[3], 7, 4.0, 4.0, 4.0, 1, 5.0);

  // One rank's points alone, in one bucket.
  const auto rank1 = store.metric_series(run_id, "loss", 1, 1);
  EXPECT_TRUE(rank1.downsampled);
  EXPECT_EQ(rank1.total_points, 2);
  ASSERT_EQ(rank1.points.size(), 1u);
  expect_point(rank1.points[0], 7, 6.5, 4.0, 9.0, 1, 5.0);
}

// A database written before steps were checked on input may hold any int64 step: every read of
// such a series answers (buckets of a span of all of int64 overflowed into a width of 0 and a
// division by it), downsampled to at most the asked number of points.
TEST(TrackerStore, SeriesOfExtremeStepsStoredEarlierIsRead) {
  FreshStore fresh;
  auto& [dir, db, store, spec] = fresh;
  const auto run_id = store.create_or_resume_run(spec).run_id;
  constexpr auto kMin = std::numeric_limits<std::int64_t>::min();
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max();
  store.ingest_metrics(
      run_id, 0, 1,
      {{"k", kMin, 1.0, 1.0}, {"k", -5, 3.0, 2.0}, {"k", 0, 5.0, 3.0}, {"k", kMax, 2.0, 4.0}});
  for (const std::int64_t max_points : {1, 2, 3, 4, 1000}) {
    const auto series = store.metric_series(run_id, "k", max_points, std::nullopt);
    EXPECT_EQ(series.total_points, 4) << max_points;
    EXPECT_EQ(series.downsampled, max_points < 4) << max_points;
    EXPECT_LE(series.points.size(), static_cast<std::size_t>(max_points)) << max_points;
    ASSERT_FALSE(series.points.empty()) << max_points;
    EXPECT_EQ(series.points.front().step, kMin) << max_points;
    ASSERT_TRUE(series.last.has_value());
    EXPECT_EQ(series.last->step, kMax);
  }
  const auto one = store.metric_series(run_id, "k", 1, std::nullopt).points;
  ASSERT_EQ(one.size(), 1u);
  EXPECT_DOUBLE_EQ(one[0].value, 2.75);
  // Two buckets of width 2^63: steps below 0 and those from 0.
  const auto two = store.metric_series(run_id, "k", 2, std::nullopt).points;
  ASSERT_EQ(two.size(), 2u);
  EXPECT_DOUBLE_EQ(two[0].value, 2.0);
  EXPECT_EQ(two[1].step, 0);
  EXPECT_DOUBLE_EQ(two[1].value, 3.5);
  EXPECT_EQ(store.metric_series(run_id, "k", std::nullopt, std::nullopt).points.size(), 4u);
  EXPECT_EQ(store.metric_series(run_id, "k", 2, std::nullopt, kMin).points.size(), 2u);
}

// The mean of a bucket is that of its values even where their sum is past the largest double.
TEST(TrackerStore, BucketMeanOfHugeValuesIsFinite) {
  FreshStore fresh;
  auto& [dir, db, store, spec] = fresh;
  const auto run_id = store.create_or_resume_run(spec).run_id;
  constexpr double kHuge = 1.7e308;
  store.ingest_metrics(run_id, 0, 1,
                       {{"k", 1, kHuge, 1.0},
                        {"k", 2, kHuge, 2.0},
                        {"k", 3, -kHuge, 3.0},
                        {"k", 4, -kHuge, 4.0},
                        {"k", 5, 1.0, 5.0},
                        {"k", 6, 3.0, 6.0}});
  const auto series = store.metric_series(run_id, "k", 3, std::nullopt).points;
  ASSERT_EQ(series.size(), 3u);
  EXPECT_DOUBLE_EQ(series[0].value, kHuge);
  EXPECT_DOUBLE_EQ(series[1].value, -kHuge);
  EXPECT_DOUBLE_EQ(series[2].value, 2.0);
  const auto whole = store.metric_series(run_id, "k", 1, std::nullopt).points;
  ASSERT_EQ(whole.size(), 1u);
  EXPECT_TRUE(std::isfinite(whole[0].value)) << whole[0].value;
  EXPECT_NEAR(whole[0].value, 4.0 / 6.0, 1e-6);
}

}  // namespace
}  // namespace nmt::tracker
