// nmt-tracker backup against a real nmt-trackerd taking writes: the copy holds every metric batch
// and run acknowledged before the backup began, each batch wholly or not at all (as the API and
// SQLite see it), and a second daemon serves it; OUT is replaced only by a whole, checked copy, and
// a refusal (an unwritable folder, OUT a directory, a full disk, a missing token) leaves OUT as it
// was and no temporary behind, on either side.

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <vector>

#include "tests/tracker_backup_ingest.h"
#include "tests/tracker_daemon_harness.h"
#include "tests/tracker_test_runs.h"
#include "tracker/api/routes.h"
#include "tracker/server/request_handler.h"
#include "tracker/store/schema.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using nmt::testing::Acknowledged;
using nmt::testing::Connection;
using nmt::testing::Daemon;
using nmt::testing::Ingest;
using nmt::testing::kPointsPerBatch;
using nmt::testing::point_value;
using nmt::testing::register_run;
using nmt::testing::TempDir;
using nmt::testing::writer_batch;
using nmt::testing::writer_key;
using namespace std::chrono_literals;

// nmt-tracker backup OUT against the daemon of `port_file`, stderr with stdout.
nmt::tracker::CliResult backup(const std::string& port_file, const std::string& out,
                               const std::string& flags = "") {
  return nmt::tracker::run_cli_env(
      "", "--port-file '" + port_file + "' " + flags + " backup '" + out + "'", true);
}

// Files in `folder` whose name holds `part`.
std::vector<std::string> files_with(const std::string& folder, const std::string& part) {
  std::vector<std::string> found;
  for (const auto& entry : fs::directory_iterator(folder)) {
    const std::string name = entry.path().filename().string();
    if (name.find(part) != std::string::npos) found.push_back(name);
  }
  return found;
}

// The steps and values stored in `run`'s series `key`, from the daemon on `port`, read a page at a
// time (never downsampled).
std::map<std::int64_t, double> series(unsigned short port, std::int64_t run,
                                      const std::string& key) {
  Connection c(port);
  std::map<std::int64_t, double> points;
  for (std::int64_t after = -1;;) {
    const auto reply = c.get("/api/runs/" + std::to_string(run) + "/metrics?max_points=5000" +
                             "&after_step=" + std::to_string(after) +
                             "&key=" + nmt::tracker::api::percent_encode(key));
    EXPECT_EQ(reply.status, 200) << reply.body.substr(0, 300);
    const json body = reply.json();
    if (reply.status != 200 || body.at("points").empty()) return points;
    for (const auto& p : body.at("points")) {
      after = p.at("step").get<std::int64_t>();
      points[after] = p.at("value").get<double>();
    }
  }
}

// Runs listed by the daemon on `port`, by id: "id name uid".
std::vector<std::string> run_listing(unsigned short port) {
  Connection c(port);
  const auto reply = c.get("/api/runs");
  EXPECT_EQ(reply.status, 200) << reply.body.substr(0, 300);
  std::vector<std::string> runs;
  const json body = reply.json();  // named: a range-for over a temporary's member would dangle
  for (const auto& r : body.at("runs")) {
    runs.push_back(std::to_string(r.at("run_id").get<std::int64_t>()) + " " +
                   r.at("name").get<std::string>() + " " + r.at("uid").get<std::string>());
  }
  return runs;
}

// The batches a database file records as acknowledged (ingested_batches), by (run, rank), read
// from the file alone (immutable: a -wal beside it is not read).
std::map<std::pair<std::int64_t, int>, std::set<int>> recorded_batches(const std::string& path) {
  SQLite::Database db("file:" + path + "?immutable=1", SQLite::OPEN_READONLY | SQLite::OPEN_URI);
  std::map<std::pair<std::int64_t, int>, std::set<int>> batches;
  SQLite::Statement rows(db, "SELECT run_id, rank, sequence FROM ingested_batches");
  while (rows.executeStep()) {
    batches[{rows.getColumn(0).getInt64(), rows.getColumn(1).getInt()}].insert(
        rows.getColumn(2).getInt());
  }
  return batches;
}

// Whether `have` holds every batch of `wanted`.
bool holds_all(const std::map<std::pair<std::int64_t, int>, std::set<int>>& have,
               const std::map<std::pair<std::int64_t, int>, std::set<int>>& wanted) {
  for (const auto& [writer, sequences] : wanted) {
    const auto it = have.find(writer);
    for (const int sequence : sequences) {
      if (it == have.end() || it->second.count(sequence) == 0) return false;
    }
  }
  return true;
}

TEST(TrackerBackup, CopyTakenDuringIngestHoldsEveryAcknowledgedBatchWholly) {
  TempDir dir;
  const std::string database = dir.file("tracker.db");
  Daemon original(dir, {}, database);
  Ingest ingest(original.port(), 3);
  // Enough that SQLite has checkpointed part of the WAL into the database file (every 1000 pages):
  // a plain copy of that file then opens, and misses the batches acknowledged since.
  ASSERT_TRUE(ingest.wait_for_batches(0, 400)) << ingest.failure();
  // Then slower (a checkpoint every few seconds), so that a backup can begin and end between two;
  // slower still after each backup that did not (a loaded machine, a sanitizer's build).
  auto pace = 15ms;
  ingest.set_pace(pace);

  // Backups until one is taken while the database file itself lacks a batch acknowledged before
  // it began and does not change (no checkpoint) until it ends: then a plain copy of the file,
  // whenever made during the backup, would lack that batch, and this test would fail on it.
  const std::string out = dir.file("copy.db");
  Acknowledged before;
  nmt::tracker::CliResult result;
  bool telling = false;
  for (int attempt = 0; attempt < 20 && !telling; ++attempt) {
    if (attempt > 0 && pace < 240ms) ingest.set_pace(pace *= 2);
    before = ingest.acknowledged();
    const std::string file_before = nmt::testing::read_text(database);
    result = backup(original.port_file(), out);
    ASSERT_EQ(result.status, 0) << result.out;
    ASSERT_TRUE(holds_all(recorded_batches(out), before.batches)) << "backup " << attempt;
    if (nmt::testing::read_text(database) == file_before) {
      nmt::testing::write_text(dir.file("plain.db"), file_before);
      telling = !holds_all(recorded_batches(dir.file("plain.db")), before.batches);
    }
  }
  ASSERT_TRUE(telling) << "no backup was taken while the database file lacked an acknowledged "
                          "batch: this run cannot tell a snapshot from a plain copy";
  // Ingest went on during and after the backup: the copy is of a database being written.
  ASSERT_TRUE(ingest.wait_for_batches(ingest.acknowledged().batch_count(), 5)) << ingest.failure();
  ingest.stop();
  ASSERT_EQ(ingest.failure(), "");
  const Acknowledged after = ingest.acknowledged();
  ASSERT_GT(after.batch_count(), before.batch_count());

  // One line: the path, the size, the run count, the schema version, the time taken.
  std::smatch line;
  ASSERT_TRUE(std::regex_search(
      result.out, line,
      std::regex(R"((\S+): \S+ \S+ \((\d+) bytes\), (\d+) runs?, schema version (\d+), \S+)")))
      << result.out;
  EXPECT_EQ(line[1].str(), out);
  EXPECT_EQ(std::stoull(line[2].str()), fs::file_size(out));
  EXPECT_TRUE(files_with(dir.path().string(), ".tmp.").empty()) << "a temporary was left";

  // SQLite's view: the acknowledged batches (ingested_batches) are exactly the metric rows there.
  {
    SQLite::Database copy(out, SQLite::OPEN_READONLY);
    EXPECT_EQ(copy.execAndGet("PRAGMA integrity_check").getString(), "ok");
    EXPECT_EQ(copy.execAndGet("SELECT COUNT(*) FROM runs").getInt64(), std::stoll(line[3].str()));
    EXPECT_EQ(copy.execAndGet("PRAGMA user_version").getInt(), std::stoi(line[4].str()));
    std::map<std::pair<std::int64_t, std::int64_t>, std::set<std::int64_t>> ingested, rows;
    SQLite::Statement batches(copy, "SELECT run_id, rank, sequence FROM ingested_batches");
    while (batches.executeStep()) {
      ingested[{batches.getColumn(0).getInt64(), batches.getColumn(1).getInt64()}].insert(
          batches.getColumn(2).getInt64());
    }
    SQLite::Statement points(copy,
                             "SELECT run_id, rank, step, COUNT(*) FROM metrics GROUP BY "
                             "run_id, rank, step / ?");
    points.bind(1, kPointsPerBatch);
    while (points.executeStep()) {
      const std::int64_t sequence = points.getColumn(2).getInt64() / kPointsPerBatch;
      rows[{points.getColumn(0).getInt64(), points.getColumn(1).getInt64()}].insert(sequence);
      EXPECT_EQ(points.getColumn(3).getInt(), kPointsPerBatch) << "a batch in part: " << sequence;
    }
    EXPECT_EQ(ingested, rows);
  }

  // The API's view, from a daemon serving the copy.
  Daemon restored(dir, {}, out);
  for (std::size_t rank = 0; rank < ingest.writer_runs().size(); ++rank) {
    const std::int64_t run = ingest.writer_runs()[rank];
    const auto points = series(restored.port(), run, writer_key(static_cast<int>(rank)));
    std::set<int> present;
    for (const auto& [step, value] : points) {
      EXPECT_EQ(value, point_value(run, step)) << "run " << run << " step " << step;
      present.insert(static_cast<int>(step / kPointsPerBatch));
    }
    for (const int sequence : present) {  // wholly or not at all
      for (int i = 0; i < kPointsPerBatch; ++i) {
        EXPECT_EQ(points.count(std::int64_t{sequence} * kPointsPerBatch + i), 1u)
            << "run " << run << " batch " << sequence << " is in the copy in part";
      }
    }
    const auto acked = before.batches.find({run, static_cast<int>(rank)});
    ASSERT_NE(acked, before.batches.end());
    for (const int sequence : acked->second) {
      EXPECT_EQ(present.count(sequence), 1u)
          << "run " << run << " batch " << sequence << " was acknowledged before the backup";
    }
    for (const int sequence : present) {  // nothing the original never acknowledged
      EXPECT_EQ(after.batches.at({run, static_cast<int>(rank)}).count(sequence), 1u) << sequence;
    }
  }
  // The runs: every one registered before the backup, and the copy's listing is the original's
  // as far as it goes (ids are given in commit order).
  const auto copied = run_listing(restored.port());
  const auto all = run_listing(original.port());
  ASSERT_LE(copied.size(), all.size());
  EXPECT_EQ(copied, std::vector<std::string>(all.begin(), all.begin() + copied.size()));
  std::set<std::int64_t> copied_ids;
  for (const auto& r : copied) copied_ids.insert(std::stoll(r));
  for (const std::int64_t run : before.runs) EXPECT_EQ(copied_ids.count(run), 1u) << run;
}

// Filled with `batches` batches of one writer.
void fill(unsigned short port, int batches) {
  Connection c(port);
  const std::int64_t run = register_run(c, "fill");
  for (int sequence = 0; sequence < batches; ++sequence) {
    ASSERT_EQ(
        c.post("/api/runs/" + std::to_string(run) + "/metrics", writer_batch(run, 0, sequence))
            .status,
        200);
  }
}

TEST(TrackerBackup, OutIsReplacedOnlyByAWholeCheckedCopy) {
  TempDir dir;
  Daemon daemon(dir, {}, dir.file("tracker.db"));
  fill(daemon.port(), 20);
  const std::string out = dir.file("out.db");

  // An existing OUT is replaced whole.
  nmt::testing::write_text(out, "an older backup");
  auto result = backup(daemon.port_file(), out);
  ASSERT_EQ(result.status, 0) << result.out;
  {
    SQLite::Database copy(out, SQLite::OPEN_READONLY);
    EXPECT_EQ(copy.execAndGet("PRAGMA integrity_check").getString(), "ok");
    EXPECT_EQ(copy.execAndGet("SELECT COUNT(*) FROM metrics").getInt64(), 20 * kPointsPerBatch);
  }
  EXPECT_EQ(fs::status(out).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);

  // OUT a directory: refused, nothing written into it or beside it.
  const std::string folder = dir.file("folder.db");
  fs::create_directory(folder);
  result = backup(daemon.port_file(), folder);
  EXPECT_EQ(result.status, 1) << result.out;
  EXPECT_NE(result.out.find(folder), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("directory"), std::string::npos) << result.out;
  EXPECT_TRUE(fs::is_empty(folder));

  // An unwritable folder (root writes to a mode 0555 one: then /sys, which nobody can write).
  const std::string locked = dir.file("locked");
  fs::create_directory(locked);
  fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
  const std::string unwritable =
      ::access(locked.c_str(), W_OK) == 0 ? "/sys/nmt-backup-test.db" : locked + "/out.db";
  result = backup(daemon.port_file(), unwritable);
  EXPECT_EQ(result.status, 1) << result.out;
  EXPECT_NE(result.out.find(unwritable), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("Permission denied"), std::string::npos) << result.out;
  EXPECT_FALSE(fs::exists(unwritable));
  EXPECT_TRUE(files_with(fs::path(unwritable).parent_path().string(), "nmt-backup-test").empty());
  fs::permissions(locked, fs::perms::owner_all);

  // Nothing was left beside OUT by any of them, and the daemon's snapshots are gone.
  EXPECT_TRUE(files_with(dir.path().string(), ".tmp.").empty());
}

TEST(TrackerBackup, AFullDiskLeavesTheOlderBackupAsItWas) {
  TempDir dir;
  nmt::testing::SmallTmpfs small(dir, "1m", nmt::testing::SmallTmpfs::Unmount::kExpectSuccess);
  if (!small.mounted()) GTEST_SKIP() << small.skip_reason();
  Daemon daemon(dir, {}, dir.file("tracker.db"));
  fill(daemon.port(), 600);  // 24,000 points, about 1.5 MB: more than the file system holds
  const std::string out = small.point() + "/out.db";
  nmt::testing::write_text(out, "an older backup");

  const auto result = backup(daemon.port_file(), out);
  EXPECT_EQ(result.status, 1) << result.out;
  EXPECT_NE(result.out.find(out), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("No space left on device"), std::string::npos) << result.out;
  EXPECT_EQ(nmt::testing::read_text(out), "an older backup");
  EXPECT_EQ(files_with(small.point(), "out.db"), std::vector<std::string>{"out.db"});
}

TEST(TrackerBackup, TheTokenRulesAreThoseOfEveryRoute) {
  TempDir dir;
  const std::string token_file = dir.file("token");
  nmt::testing::write_text(token_file, "s3cret\n");
  fs::permissions(token_file, fs::perms::owner_read | fs::perms::owner_write);
  Daemon daemon(dir, {"--token-file", token_file}, dir.file("tracker.db"));
  const std::string out = dir.file("out.db");

  auto result = backup(daemon.port_file(), out);
  EXPECT_EQ(result.status, 1) << result.out;
  EXPECT_NE(result.out.find("401"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find(out), std::string::npos) << result.out;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_TRUE(files_with(dir.path().string(), ".tmp.").empty());

  result = backup(daemon.port_file(), out, "--token-file '" + token_file + "'");
  EXPECT_EQ(result.status, 0) << result.out;
  EXPECT_TRUE(fs::exists(out));
}

// A database of about `megabytes` MB: big batches of points of one run.
void fill_megabytes(unsigned short port, int megabytes) {
  Connection c(port);
  const std::int64_t run = register_run(c, "large");
  constexpr int kPoints = 10000;  // about 0.6 MB stored
  for (int sequence = 0; sequence < megabytes * 10 / 6; ++sequence) {
    json points = json::array();
    for (int i = 0; i < kPoints; ++i) {
      const std::int64_t step = std::int64_t{sequence} * kPoints + i;
      points.push_back({{"key", "large/loss"}, {"step", step}, {"value", point_value(run, step)}});
    }
    const auto reply = c.post("/api/runs/" + std::to_string(run) + "/metrics",
                              {{"rank", 0}, {"sequence", sequence}, {"points", points}});
    ASSERT_EQ(reply.status, 200) << reply.body;
  }
}

// A backup larger than the socket buffers, its client reading nothing for a while: the daemon
// holds it in bounded memory (the file is read a piece at a time), refuses a second backup
// meanwhile (503), and takes one again once the first is sent.
TEST(TrackerBackup, OneBackupAtATimeEachSentInBoundedMemory) {
  TempDir dir;
  Daemon daemon(dir, {}, dir.file("tracker.db"));
  fill_megabytes(daemon.port(), 40);
  const long peak_before_kb = nmt::testing::proc_status_kb(daemon.pid(), "VmHWM");

  nmt::testing::TestSocket first(daemon.port(), 60s);
  first.send_raw("GET /api/backup HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  std::string received(4096, '\0');
  received.resize(first.read_some(boost::asio::buffer(received)));  // the header has come
  ASSERT_EQ(received.rfind("HTTP/1.1 200", 0), 0u) << received.substr(0, 200);

  const auto second = Connection(daemon.port()).get("/api/backup");
  EXPECT_EQ(second.status, 503) << second.body.substr(0, 300);
  EXPECT_NE(second.body.find("another backup"), std::string::npos) << second.body.substr(0, 300);

  // The rest of the first: its whole Content-Length.
  const auto header_end = [&] { return received.find("\r\n\r\n"); };
  while (header_end() == std::string::npos) {
    char more[4096];
    received.append(more, first.read_some(boost::asio::buffer(more)));
  }
  std::smatch length;
  const std::string header = received.substr(0, header_end());
  ASSERT_TRUE(std::regex_search(header, length, std::regex(R"(Content-Length: (\d+))"))) << header;
  const std::uint64_t body_size = std::stoull(length[1].str());
  std::uint64_t body_read = received.size() - header_end() - 4;
  std::vector<char> piece(1 << 20);
  while (body_read < body_size) body_read += first.read_some(boost::asio::buffer(piece));
  EXPECT_EQ(body_read, body_size);
  EXPECT_GT(body_size, 30u << 20);
  // Built with a sanitizer, the daemon's peak is its shadow memory of the pages the snapshot
  // touched, not its buffers: measured only without one.
  const long growth_kb = nmt::testing::proc_status_kb(daemon.pid(), "VmHWM") - peak_before_kb;
  if (!nmt::testing::kSanitized) {
    EXPECT_LT(growth_kb, static_cast<long>(body_size / 1024 / 4))
        << "the daemon's peak memory grew by " << growth_kb << " kB for a " << body_size
        << "-byte backup";
  }

  const auto third = backup(daemon.port_file(), dir.file("out.db"));
  EXPECT_EQ(third.status, 0) << third.out;
}

// The daemon's side of a failure: a snapshot that does not fit beside the database is a 500 naming
// the cause, leaves no temporary, and the daemon goes on; one left by a daemon that died while
// making it is removed by the next backup.
TEST(TrackerBackup, TheDaemonLeavesNoSnapshotBehind) {
  TempDir dir;
  nmt::testing::SmallTmpfs small(dir, "8m", nmt::testing::SmallTmpfs::Unmount::kExpectSuccess);
  if (!small.mounted()) GTEST_SKIP() << small.skip_reason();
  const std::string database = small.point() + "/tracker.db";
  // The temporary of a daemon that died while making a snapshot: a process that has ended.
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ::waitpid(dead, nullptr, 0);
  nmt::testing::write_text(database + "-backup.tmp." + std::to_string(dead), "half a snapshot");

  Daemon daemon(dir, {}, database);
  fill(daemon.port(), 100);
  Connection c(daemon.port());
  auto reply = c.get("/api/backup");
  ASSERT_EQ(reply.status, 200) << reply.body.substr(0, 300);
  EXPECT_TRUE(files_with(small.point(), "-backup.tmp.").empty());
  const std::uint64_t snapshot_size = reply.body.size();

  // Fill the file system until the database's size no longer fits beside it.
  const std::string filler = small.point() + "/filler";
  {
    std::ofstream space(filler, std::ios::binary);
    const std::string block(64 * 1024, 'x');
    while (space.write(block.data(), static_cast<std::streamsize>(block.size()))) {
    }
  }
  fs::resize_file(filler, fs::file_size(filler) - snapshot_size / 2);
  reply = c.get("/api/backup");
  EXPECT_EQ(reply.status, 500) << reply.body.substr(0, 300);
  EXPECT_NE(reply.body.find("full"), std::string::npos) << reply.body;
  EXPECT_NE(reply.body.find("-backup.tmp."), std::string::npos) << reply.body;
  EXPECT_TRUE(files_with(small.point(), "-backup.tmp.").empty());
  EXPECT_EQ(Connection(daemon.port()).get("/api/runs").status, 200);
}

// The route as the handler answers it: the snapshot as a body file whose name is already gone,
// with its schema version; a second backup refused while the first is held; none for a database
// in memory.
TEST(TrackerBackupRoute, AnswersTheSnapshotAsAFileOneAtATime) {
  TempDir dir;
  nmt::tracker::Database db(dir.file("tracker.db"));
  nmt::tracker::RunStore store(db);
  nmt::tracker::RequestHandler handler(store, "");
  const auto get_backup = [&](nmt::tracker::RequestHandler& h) {
    return h.handle(nmt::tracker::Request{"GET", "/api/backup", {}, "", "", ""});
  };
  ASSERT_EQ(handler
                .handle(nmt::tracker::Request{
                    "POST", "/api/runs", {}, "", R"({"experiment": "e", "name": "r"})", ""})
                .status,
            200);

  auto first = get_backup(handler);
  ASSERT_EQ(first.status, 200) << first.body;
  ASSERT_NE(first.body_file, nullptr);
  EXPECT_EQ(first.body, "");
  EXPECT_EQ(first.content_type, "application/vnd.sqlite3");
  const std::vector<std::pair<std::string, std::string>> headers = {
      {"X-Schema-Version", std::to_string(nmt::tracker::latest_schema_version())}};
  EXPECT_EQ(first.headers, headers);
  char magic[16] = {};
  ASSERT_EQ(::pread(first.body_file->descriptor(), magic, sizeof magic, 0), 16);
  EXPECT_EQ(std::string(magic, sizeof magic), std::string("SQLite format 3\0", 16));
  struct stat info {};
  ASSERT_EQ(::fstat(first.body_file->descriptor(), &info), 0);
  EXPECT_EQ(static_cast<std::uint64_t>(info.st_size), first.body_file->size());
  EXPECT_EQ(info.st_nlink, 0u) << "the snapshot's name must be gone once it is open";
  EXPECT_TRUE(files_with(dir.path().string(), "-backup").empty());

  const auto second = get_backup(handler);
  EXPECT_EQ(second.status, 503) << second.body;
  EXPECT_EQ(second.body_file, nullptr);
  first.body_file.reset();
  EXPECT_EQ(get_backup(handler).status, 200);

  nmt::tracker::Database memory(":memory:");
  nmt::tracker::RunStore memory_store(memory);
  nmt::tracker::RequestHandler memory_handler(memory_store, "");
  const auto none = get_backup(memory_handler);
  EXPECT_EQ(none.status, 501) << none.body;
  EXPECT_NE(none.body.find(":memory:"), std::string::npos) << none.body;
}

}  // namespace
