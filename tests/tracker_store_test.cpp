// The tracker's SQLite store: a real database file in WAL mode, migrated to the current schema,
// surviving a reopen; a file from a newer build is refused.

#include "tracker/store/database.h"

#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include "test_utils.h"
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

}  // namespace
}  // namespace nmt::tracker
