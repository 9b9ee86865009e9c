// The tracker's SQLite store: a real database file in WAL mode, migrated to the current schema,
// surviving a reopen; a file from a newer build is refused; a file from an older build upgraded
// with its data. RunStore's own promises: typed errors, all-or-nothing batches, exact
// downsampling buckets.

#include "tracker/store/database.h"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>
#include <sys/stat.h>

#include "test_utils.h"
#include "tracker/store/run_store.h"
#include "tracker/store/schema.h"

namespace nmt::tracker {
namespace {

using testing::TempDir;

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
    // The old constraint, as issue 16 met it.
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
  const auto tiny = store.get_run(1);
  EXPECT_EQ(tiny.at("name"), "tiny");
  EXPECT_EQ(tiny.at("status"), "failed");
  EXPECT_EQ(tiny.at("attempt"), 2);
  EXPECT_EQ(tiny.at("world_size"), 4);
  EXPECT_TRUE(tiny.at("uid").is_null());
  EXPECT_DOUBLE_EQ(tiny.at("params").at("model.dropout").get<double>(), 0.1);
  EXPECT_EQ(tiny.at("evals").size(), 1u);
  // Only the current attempt was known to version 2.
  ASSERT_EQ(tiny.at("attempts").size(), 1u);
  EXPECT_EQ(tiny.at("attempts")[0].at("attempt"), 2);
  EXPECT_EQ(tiny.at("attempts")[0].at("status"), "failed");
  EXPECT_EQ(tiny.at("attempts")[0].at("slurm_job_id"), "77");
  EXPECT_DOUBLE_EQ(tiny.at("attempts")[0].at("ended_at").get<double>(), 20.0);
  EXPECT_EQ(store.metric_series(2, "loss", std::nullopt, std::nullopt).at("points").size(), 1u);
  EXPECT_TRUE(store.ingest_metrics(1, 0, 7, {{"loss", 2, 1.0, std::nullopt}}).duplicate);
  EXPECT_EQ(store.sweep_table("S").at("rows").size(), 1u);

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
  EXPECT_EQ(store.get_run(1).at("attempts")[0].at("status"), "preempted");
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
  NMT_EXPECT_THROW_WITH(store.sweep_table("none"), NotFound, "none");
  RunSpec spec;
  spec.experiment = "e";
  NMT_EXPECT_THROW_WITH(store.create_or_resume_run(spec), std::invalid_argument, "run name");
  spec.name = "r";
  spec.params = {{"model.d_model", nullptr}};
  NMT_EXPECT_THROW_WITH(store.create_or_resume_run(spec), std::invalid_argument, "model.d_model");
  spec.params = {{"model.d_model", 512}};
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
  EXPECT_EQ(store.get_run(run.run_id).at("status"), "running");
}

TEST(TrackerStore, RejectedBatchWritesNothingAndKeepsItsSequence) {
  TempDir dir;
  Database db(dir.file("tracker.db"));
  RunStore store(db);
  RunSpec spec;
  spec.experiment = "e";
  spec.name = "r";
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
  ASSERT_EQ(series.at("points").size(), 3u);
  EXPECT_DOUBLE_EQ(series.at("points")[2].at("time").get<double>(), 123.0);
}

TEST(TrackerStore, DownsamplingAveragesEqualStepBuckets) {
  TempDir dir;
  Database db(dir.file("tracker.db"));
  RunStore store(db);
  RunSpec spec;
  spec.experiment = "e";
  spec.name = "r";
  const auto run_id = store.create_or_resume_run(spec).run_id;
  std::vector<MetricPoint> points;
  for (int step = 1; step <= 10; ++step) {
    points.push_back({"bleu", step, static_cast<double>(step), std::nullopt});
  }
  store.ingest_metrics(run_id, 0, 0, points);
  const auto series = store.metric_series(run_id, "bleu", 5, 0).at("points");
  ASSERT_EQ(series.size(), 5u);
  for (int i = 0; i < 5; ++i) {  // buckets {1,2}, {3,4}, ... of two steps each
    EXPECT_EQ(series[i].at("step"), 2 * i + 1);
    EXPECT_DOUBLE_EQ(series[i].at("value").get<double>(), 2 * i + 1.5);
    EXPECT_DOUBLE_EQ(series[i].at("min").get<double>(), 2 * i + 1);
    EXPECT_DOUBLE_EQ(series[i].at("max").get<double>(), 2 * i + 2);
    EXPECT_EQ(series[i].at("rank"), 0);
  }
  EXPECT_TRUE(store.metric_series(run_id, "bleu", 5, 1).at("points").empty());
  // The answer says whether it was downsampled, and from how many points.
  const auto bucketed = store.metric_series(run_id, "bleu", 5, 0);
  EXPECT_EQ(bucketed.at("downsampled"), true);
  EXPECT_EQ(bucketed.at("total_points"), 10);
  const auto whole = store.metric_series(run_id, "bleu", 10, 0);
  EXPECT_EQ(whole.at("downsampled"), false);
  EXPECT_EQ(whole.at("total_points"), 10);
  // The newest point is exact either way (the last bucket's mean is 9.5).
  EXPECT_EQ(bucketed.at("last").at("step"), 10);
  EXPECT_DOUBLE_EQ(bucketed.at("last").at("value").get<double>(), 10.0);
  EXPECT_EQ(whole.at("last"), bucketed.at("last"));
  EXPECT_TRUE(store.metric_series(run_id, "bleu", 5, 1).at("last").is_null()) << "no rank 1";
}

}  // namespace
}  // namespace nmt::tracker
