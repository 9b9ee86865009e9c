// The tracker's SQLite store: a real database file in WAL mode, migrated to the current schema,
// surviving a reopen; a file from a newer build is refused. RunStore's own promises: typed errors,
// all-or-nothing batches, exact downsampling buckets.

#include "tracker/store/database.h"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

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
    Database db(path);
    db.sqlite().exec("DROP INDEX evals_run; DROP INDEX artifacts_run; PRAGMA user_version = 1");
  }
  Database db(path);
  EXPECT_EQ(db.schema_version(), latest_schema_version());
  EXPECT_EQ(db.sqlite()
                .execAndGet("SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND "
                            "name IN ('evals_run', 'artifacts_run')")
                .getInt(),
            2);
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
}

}  // namespace
}  // namespace nmt::tracker
