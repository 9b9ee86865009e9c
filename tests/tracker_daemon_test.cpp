// nmt-trackerd as scripts and training jobs see it: the real binary on 127.0.0.1, spoken to over
// HTTP. Covers the API's error statuses, the server's limits (body size, read timeout), auth,
// clean shutdown, and the promise that an acknowledged metric batch survives kill -9.

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>

#include <atomic>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <thread>

#include "tests/tracker_daemon_harness.h"
#include "tracker/server/http_server.h"
#include "tracker/server/request_target.h"

namespace {

using nlohmann::json;
using nmt::testing::Connection;
using nmt::testing::Daemon;
using nmt::testing::Reply;
using nmt::testing::ServedDaemon;
using nmt::testing::TempDir;
using nmt::testing::TestSocket;
using Clock = std::chrono::steady_clock;
namespace http = boost::beast::http;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::int64_t create_run(Connection& c, const std::string& name) {
  const auto reply = c.post("/api/runs", {{"experiment", "daemon_test"}, {"name", name}});
  EXPECT_EQ(reply.status, 200) << reply.body;
  return reply.json().at("run_id").get<std::int64_t>();
}

// Points step = first..first+count-1 with value = step * 0.5 + rank.
json metric_batch(int rank, int sequence, int first, int count, const std::string& key = "loss") {
  json points = json::array();
  for (int step = first; step < first + count; ++step) {
    points.push_back({{"key", key}, {"step", step}, {"value", step * 0.5 + rank}});
  }
  return {{"rank", rank}, {"sequence", sequence}, {"points", points}};
}

// A per-rank key, as the trainer names each rank's own figures.
std::string rank_key(int rank) {
  return "rank" + std::to_string(rank) + "_loss";
}

std::string metrics_path(std::int64_t run) {
  return "/api/runs/" + std::to_string(run) + "/metrics";
}

// Steps of `key` stored for `run` (all ranks, or one), in answer order.
std::vector<std::int64_t> stored_steps(Connection& c, std::int64_t run, const std::string& query) {
  const auto reply = c.get(metrics_path(run) + "?" + query);
  EXPECT_EQ(reply.status, 200) << reply.body.substr(0, 200);
  const json body = reply.json();  // named: a range-for over a temporary's member would dangle
  std::vector<std::int64_t> steps;
  for (const auto& p : body.at("points")) steps.push_back(p.at("step").get<std::int64_t>());
  return steps;
}

TEST(TrackerDaemon, HealthAnswers200) {
  ServedDaemon served;
  auto& [dir, daemon, c] = served;
  const auto reply = c.get("/api/health");
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(reply.json().at("status"), "ok");
  EXPECT_GT(reply.json().at("schema_version").get<int>(), 0);
  EXPECT_TRUE(reply.keep_alive);
}

TEST(TrackerDaemon, CreateRunIngestAndReadSeriesOverOneConnection) {
  ServedDaemon served;
  auto& [dir, daemon, c] = served;
  const auto run = create_run(c, "series");
  auto reply = c.post(metrics_path(run), metric_batch(0, 0, 0, 10, "train/loss rate"));
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(reply.json().at("stored"), 10);
  EXPECT_EQ(reply.json().at("duplicate"), false);
  // %2F and '+' in the query must reach the handler decoded.
  reply = c.get(metrics_path(run) + "?key=train%2Floss+rate");
  ASSERT_EQ(reply.status, 200) << reply.body;
  const auto body = reply.json();
  EXPECT_EQ(body.at("key"), "train/loss rate");
  ASSERT_EQ(body.at("points").size(), 10u);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(body["points"][i].at("step"), i);
    EXPECT_DOUBLE_EQ(body["points"][i].at("value").get<double>(), i * 0.5);
  }
}

TEST(TrackerDaemon, MalformedJsonIs400NamingTheField) {
  ServedDaemon served;
  auto& [dir, daemon, c] = served;
  auto reply = c.request(http::verb::post, "/api/runs", "{\"experiment\": ");
  ASSERT_EQ(reply.status, 400) << reply.body;
  EXPECT_TRUE(reply.json().contains("error"));
  EXPECT_EQ(reply.json().at("field"), "body");
  reply = c.post("/api/runs", {{"experiment", 3}, {"name", "x"}});
  ASSERT_EQ(reply.status, 400) << reply.body;
  EXPECT_EQ(reply.json().at("field"), "experiment");
  // A broken %-escape is refused by the server before any route sees it.
  reply = Connection(daemon.port()).get("/api/runs?experiment=%zz");
  EXPECT_EQ(reply.status, 400) << reply.body;
  EXPECT_NE(reply.json().at("error").get<std::string>().find("percent"), std::string::npos);
}

TEST(TrackerDaemon, UnknownRouteIs404) {
  ServedDaemon served;
  auto& [dir, daemon, c] = served;
  const auto reply = c.get("/api/no/such/route");
  EXPECT_EQ(reply.status, 404) << reply.body;
  EXPECT_TRUE(reply.json().contains("error"));
  EXPECT_EQ(c.get("/api/health").status, 200);  // the connection stays usable
}

TEST(TrackerDaemon, OversizedBodyIs413AndTheDaemonKeepsServing) {
  TempDir dir;
  Daemon daemon(dir, {"--body-limit", "1024"});
  const auto run = [&] {
    Connection c(daemon.port());
    return create_run(c, "small body");  // under the limit: accepted
  }();
  {
    Connection c(daemon.port());
    const auto reply = c.post(metrics_path(run), metric_batch(0, 0, 0, 200));
    EXPECT_EQ(reply.status, 413) << reply.body;
    EXPECT_NE(reply.json().at("error").get<std::string>().find("1024"), std::string::npos);
    EXPECT_FALSE(reply.keep_alive);
    EXPECT_TRUE(c.socket().closed_within(std::chrono::seconds(15)));
  }
  {
    // Chunked bodies have no Content-Length to check up front; the limit must still hold.
    Connection c(daemon.port());
    c.socket().send_raw("POST /api/runs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" +
                        std::string("800\r\n") + std::string(0x800, ' ') + "\r\n0\r\n\r\n");
    EXPECT_EQ(c.read_reply().status, 413);
  }
  EXPECT_EQ(Connection(daemon.port()).get("/api/health").status, 200);
}

TEST(TrackerDaemon, StalledClientsBlockNobodyAndAreDropped) {
  TempDir dir;
  Daemon daemon(dir, {"--read-timeout", "6", "--threads", "1"});
  const auto stalled_at = Clock::now();
  std::vector<std::unique_ptr<TestSocket>> stalled;
  for (int i = 0; i < 8; ++i) {
    stalled.push_back(std::make_unique<TestSocket>(daemon.port()));
    // Half of them stop inside the header, half inside a declared body.
    stalled.back()->send_raw(i % 2 ? "GET /api/heal"
                                   : "POST /api/runs HTTP/1.1\r\nHost: x\r\n"
                                     "Content-Length: 100\r\n\r\n{\"experiment\"");
  }
  // Clients stuck behind the stalled ones would wait for the 6 s read timeout; 20 requests take
  // milliseconds on an idle machine, so the bound leaves a loaded one its slack below it.
  const auto start = Clock::now();
  for (int i = 0; i < 20; ++i) EXPECT_EQ(Connection(daemon.port()).get("/api/health").status, 200);
  EXPECT_LT(seconds_since(start), 4.0) << "healthy clients waited behind stalled ones";
  // Dropped by the read timeout: not before it (they connected after stalled_at), and well
  // within 10 s after it.
  for (auto& socket : stalled) EXPECT_TRUE(socket->closed_within(std::chrono::seconds(20)));
  const double dropped_after = seconds_since(stalled_at);
  EXPECT_GT(dropped_after, 5.5);
  EXPECT_LT(dropped_after, 16.0);
}

TEST(TrackerDaemon, RefusesNonLoopbackBindWithoutToken) {
  TempDir dir;
  const std::string log = dir.file("refused.log");
  const int status = Daemon::run_to_exit({"--db", dir.file("t.db"), "--bind", "0.0.0.0", "--port",
                                          "0", "--port-file", dir.file("port")},
                                         log);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 0);
  EXPECT_NE(nmt::testing::read_text(log).find("--token-file"), std::string::npos)
      << nmt::testing::read_text(log);
  EXPECT_FALSE(std::filesystem::exists(dir.file("port")));
}

// One daemon per database: a second start exits at once naming the first (pid, host, since),
// also with the record of the holder deleted; a SIGKILLed holder is taken over with a log line.
TEST(TrackerDaemon, ASecondDaemonOnTheDatabaseExitsNamingTheFirst) {
  TempDir dir;
  auto first = std::make_unique<Daemon>(dir, std::vector<std::string>{});
  const std::vector<std::string> second = {"--db", dir.file("tracker.db"), "--port",
                                           "0",    "--port-file",          dir.file("second.port")};
  int status = Daemon::run_to_exit(second, dir.file("second.log"));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 0);
  const std::string refused = nmt::testing::read_text(dir.file("second.log"));
  EXPECT_NE(
      refused.find("in use by nmt-trackerd (pid " + std::to_string(first->pid()) + " on host "),
      std::string::npos)
      << refused;
  EXPECT_NE(refused.find(", since 20"), std::string::npos) << refused;
  EXPECT_FALSE(std::filesystem::exists(dir.file("second.port")));
  ASSERT_TRUE(std::filesystem::remove(dir.file("tracker.db.holder")));
  status = Daemon::run_to_exit(second, dir.file("third.log"));
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_NE(WEXITSTATUS(status), 0) << nmt::testing::read_text(dir.file("third.log"));
  EXPECT_EQ(Connection(first->port()).get("/api/health").status, 200);
  first->signal_and_wait(SIGKILL);
  first = std::make_unique<Daemon>(dir, std::vector<std::string>{});
  const pid_t killed = first->pid();
  first->signal_and_wait(SIGKILL);
  first.reset();
  Daemon after(dir, {});
  EXPECT_NE(after.log().find("taking over from nmt-trackerd (pid " + std::to_string(killed)),
            std::string::npos)
      << after.log();
}

TEST(TrackerDaemon, TokenFileMakesRequestsWithoutBearer401) {
  TempDir dir;
  nmt::testing::write_text(dir.file("token"), "s3cret-token\n");
  Daemon daemon(dir, {"--token-file", dir.file("token")});
  const json run = {{"experiment", "e"}, {"name", "n"}};
  EXPECT_EQ(Connection(daemon.port()).post("/api/runs", run).status, 401);
  EXPECT_EQ(Connection(daemon.port(), "wrong").post("/api/runs", run).status, 401);
  EXPECT_EQ(Connection(daemon.port(), "s3cret-token").post("/api/runs", run).status, 200);
  EXPECT_EQ(Connection(daemon.port()).get("/api/health").status, 200);
}

// The dashboard over real HTTP: without the token a page is a 401 HTML page; /?token= answers 303
// with the cookie in a Set-Cookie header; with the cookie the page and the API answer.
TEST(TrackerDaemon, DashboardLoginSetsTheCookieThatAuthorizesPagesAndApi) {
  TempDir dir;
  nmt::testing::write_text(dir.file("token"), "s3cret-token\n");
  Daemon daemon(dir, {"--token-file", dir.file("token")});
  Connection browser(daemon.port());
  const Reply refused = browser.get("/");
  EXPECT_EQ(refused.status, 401);
  EXPECT_EQ(refused.content_type, "text/html; charset=utf-8");
  EXPECT_NE(refused.body.find("/?token="), std::string::npos) << refused.body;
  EXPECT_EQ(Connection(daemon.port()).get("/?token=wrong").status, 401);

  const Reply login = Connection(daemon.port()).get("/?token=s3cret-token");
  EXPECT_EQ(login.status, 303);
  EXPECT_EQ(login.location, "/");
  EXPECT_EQ(login.set_cookie, "nmt_tracker_token=s3cret-token; HttpOnly; SameSite=Strict; Path=/");

  Connection with_cookie(daemon.port());
  with_cookie.set_cookie("nmt_tracker_token=s3cret-token");
  const Reply page = with_cookie.get("/");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type.rfind("text/html", 0), 0u) << page.content_type;
  const Reply runs = with_cookie.get("/api/runs");
  EXPECT_EQ(runs.status, 200) << runs.body;
  EXPECT_EQ(runs.json().at("runs"), json::array());
  EXPECT_EQ(with_cookie.request(http::verb::delete_, "/api/runs/1").status, 404);
}

TEST(TrackerDaemon, SigtermExitsZeroPromptlyAndKeepsTheData) {
  TempDir dir;
  std::int64_t run = 0;
  {
    Daemon daemon(dir, {});
    Connection idle(daemon.port());  // an idle keep-alive client must not delay the shutdown
    run = create_run(idle, "sigterm");
    ASSERT_EQ(idle.post(metrics_path(run), metric_batch(0, 0, 0, 50)).status, 200);
    const auto start = Clock::now();
    const int status = daemon.signal_and_wait(SIGTERM);
    // Half the 30 s read timeout the idle client would otherwise hold it for: closing the
    // database checkpoints its WAL with an fsync, which a loaded machine can make slow.
    EXPECT_LT(seconds_since(start), 15.0);
    ASSERT_TRUE(WIFEXITED(status)) << daemon.log();
    EXPECT_EQ(WEXITSTATUS(status), 0) << daemon.log();
    EXPECT_FALSE(std::filesystem::exists(daemon.port_file()));
    // SQLite removes the WAL when the last connection closes: the database was closed cleanly.
    EXPECT_FALSE(std::filesystem::exists(dir.file("tracker.db-wal")));
    EXPECT_TRUE(idle.socket().closed_within(std::chrono::seconds(1)));
  }
  Daemon again(dir, {});
  Connection c(again.port());
  EXPECT_EQ(stored_steps(c, run, "key=loss").size(), 50u);
}

TEST(TrackerDaemon, SigkillLosesNoAcknowledgedBatch) {
  TempDir dir;
  std::int64_t run = 0;
  std::vector<int> acknowledged;
  {
    Daemon daemon(dir, {});
    run = [&] {
      Connection c(daemon.port());
      return create_run(c, "sigkill");
    }();
    std::atomic<int> acked{0};
    std::thread ingest([&] {
      try {
        Connection c(daemon.port());
        for (int seq = 0;; ++seq) {
          if (c.post(metrics_path(run), metric_batch(0, seq, seq * 20, 20)).status != 200) break;
          acknowledged.push_back(seq);
          acked = seq + 1;
        }
      } catch (const std::exception&) {
        // The daemon died under us: what was acknowledged is what counts.
      }
    });
    // Kill mid-stream; the deadline only guards against an ingest thread that stopped early, and
    // leaves a loaded machine time to commit 40 batches.
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (acked < 40 && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    daemon.signal_and_wait(SIGKILL);
    ingest.join();
  }
  ASSERT_GE(acknowledged.size(), 40u);
  Daemon again(dir, {});
  Connection c(again.port());
  const auto steps = stored_steps(c, run, "key=loss");
  const std::set<std::int64_t> unique(steps.begin(), steps.end());
  EXPECT_EQ(unique.size(), steps.size()) << "a point was stored twice";
  for (int seq : acknowledged) {
    for (int step = seq * 20; step < seq * 20 + 20; ++step) {
      ASSERT_TRUE(unique.count(step)) << "acknowledged batch " << seq << " lost step " << step;
    }
  }
  // A client retrying its last acknowledged batch after the restart must not store it again.
  const auto retry =
      c.post(metrics_path(run), metric_batch(0, acknowledged.back(), acknowledged.back() * 20, 20));
  EXPECT_EQ(retry.json().at("duplicate"), true);
}

// Each client is one rank logging its own key (as the trainer's per-rank figures are), over the
// same steps.
TEST(TrackerDaemon, ConcurrentClientsStoreEveryPointExactlyOnce) {
  constexpr int kClients = 8, kBatches = 100, kPoints = 100;
  TempDir dir;
  // Every point is read back, so answers must not be downsampled (the default cap is 10000).
  Daemon daemon(dir, {"--threads", "2", "--max-response-points", "100000"});
  const auto run = [&] {
    Connection c(daemon.port());
    return create_run(c, "concurrent");
  }();
  std::atomic<int> failures{0}, duplicates{0};
  const auto start = Clock::now();
  std::vector<std::thread> clients;
  for (int rank = 0; rank < kClients; ++rank) {
    clients.emplace_back([&, rank] {
      Connection c(daemon.port());
      for (int seq = 0; seq < kBatches; ++seq) {
        const auto batch = metric_batch(rank, seq, seq * kPoints, kPoints, rank_key(rank));
        // Every tenth batch is sent twice, as a client does when an answer was lost.
        for (int attempt = 0; attempt < (seq % 10 == 0 ? 2 : 1); ++attempt) {
          const auto reply = c.post(metrics_path(run), batch);
          if (reply.status != 200) ++failures;
          if (reply.status == 200 && reply.json().at("duplicate") == true) ++duplicates;
        }
      }
    });
  }
  for (auto& t : clients) t.join();
  const double ingest_s = seconds_since(start);
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(duplicates, kClients * kBatches / 10);
  Connection c(daemon.port());
  for (int rank = 0; rank < kClients; ++rank) {
    const std::string key = "key=" + rank_key(rank);
    EXPECT_TRUE(
        stored_steps(c, run, key + "&rank=" + std::to_string((rank + 1) % kClients)).empty());
    const auto steps = stored_steps(c, run, key + "&rank=" + std::to_string(rank));
    ASSERT_EQ(steps.size(), std::size_t{kBatches * kPoints}) << "rank " << rank;
    for (std::size_t i = 0; i < steps.size(); ++i) ASSERT_EQ(steps[i], std::int64_t(i));
  }
  RecordProperty("ingest_points_per_second",
                 static_cast<int>(kClients * kBatches * kPoints / ingest_s));
  std::cout << "ingest: " << kClients * kBatches * kPoints << " points in " << ingest_s << " s\n";
}

// A trainer SIGKILLed at step 100 whose daemon was SIGKILLed too: the resumed attempt registers
// with the run's uid, re-sends attempt 1's points from metrics.jsonl (at least once) and re-trains
// from the checkpoint at step 60. The series has one point per step, attempt 2's from step 60 on,
// and attempt 1 is crashed.
TEST(TrackerDaemon, ResumedAttemptLeavesOnePointPerStepAndAttemptOneCrashed) {
  TempDir dir;
  const json spec = {{"experiment", "daemon_test"}, {"name", "resumed"}, {"uid", "resumed-run-1"}};
  std::int64_t run = 0;
  {
    Daemon daemon(dir, {});
    Connection c(daemon.port());
    const auto reply = c.post("/api/runs", spec);
    ASSERT_EQ(reply.status, 200) << reply.body;
    run = reply.json().at("run_id").get<std::int64_t>();
    for (int seq = 0; seq < 5; ++seq) {
      ASSERT_EQ(c.post(metrics_path(run), metric_batch(0, seq, seq * 20, 20)).status, 200);
    }
    daemon.signal_and_wait(SIGKILL);
  }
  Daemon daemon(dir, {});
  Connection c(daemon.port());
  json again = spec;
  again["attempt"] = 2;
  ASSERT_EQ(c.post("/api/runs", again).json().at("resumed"), true);
  for (int seq = 0; seq < 5; ++seq) {  // metrics.jsonl re-sent, in batches of new sequences
    ASSERT_EQ(c.post(metrics_path(run), metric_batch(0, 100 + seq, seq * 20, 20)).status, 200);
  }
  for (int seq = 0; seq < 3; ++seq) {  // steps 60..119 from the checkpoint: value step * 0.5 + 1
    json batch = metric_batch(0, 200 + seq, 60 + seq * 20, 20);
    for (json& point : batch.at("points")) point["value"] = point.at("value").get<double>() + 1;
    ASSERT_EQ(c.post(metrics_path(run), batch).status, 200);
  }
  ASSERT_EQ(c.request(http::verb::put, "/api/runs/" + std::to_string(run) + "/status",
                      R"({"status": "finished"})")
                .status,
            200);

  const auto reply = c.get(metrics_path(run) + "?key=loss");
  ASSERT_EQ(reply.status, 200) << reply.body.substr(0, 200);
  const json series = reply.json();
  ASSERT_EQ(series.at("points").size(), 120u);
  for (int step = 0; step < 120; ++step) {
    const json& point = series.at("points")[step];
    ASSERT_EQ(point.at("step"), step);
    EXPECT_DOUBLE_EQ(point.at("value").get<double>(), step * 0.5 + (step < 60 ? 0 : 1))
        << "step " << step;
  }
  const json detail = c.get("/api/runs/" + std::to_string(run)).json();
  EXPECT_EQ(detail.at("status"), "finished");
  ASSERT_EQ(detail.at("attempts").size(), 2u);
  EXPECT_EQ(detail.at("attempts")[0].at("status"), "crashed");
  EXPECT_EQ(detail.at("attempts")[0].at("ended_at"), detail.at("attempts")[1].at("started_at"));
  EXPECT_EQ(detail.at("attempts")[1].at("status"), "finished");
}

TEST(HttpServerTarget, DecodesPathAndQuery) {
  nmt::tracker::Request r;
  nmt::tracker::parse_target("/api/sweeps/base%20sweep/table?param.model.d_k=64&e=a+b&flag&x=%2B1",
                             r);
  EXPECT_EQ(r.path, "/api/sweeps/base sweep/table");
  EXPECT_EQ(r.query.at("param.model.d_k"), "64");
  EXPECT_EQ(r.query.at("e"), "a b");
  EXPECT_EQ(r.query.at("flag"), "");
  EXPECT_EQ(r.query.at("x"), "+1");
  EXPECT_EQ(nmt::tracker::percent_decode("a+b", false), "a+b");  // '+' is literal in paths
  EXPECT_THROW(nmt::tracker::parse_target("/a?x=%2", r), std::invalid_argument);
  EXPECT_THROW(nmt::tracker::parse_target("/a%g1", r), std::invalid_argument);
}

// The server alone, in this process, with handlers the real daemon never has: one that throws
// and one that is slow.
class InProcessServer : public ::testing::Test {
 protected:
  void start(nmt::tracker::RequestCallback handler) {
    server_ = std::make_unique<nmt::tracker::HttpServer>(io_, nmt::tracker::ServerOptions{},
                                                         std::move(handler));
    runner_ = std::thread([this] { io_.run(); });
  }
  // Stops the server; true when io_context::run() then returns within `limit`.
  bool stop_within(std::chrono::milliseconds limit) {
    server_->stop();
    std::atomic<bool> done{false};
    std::thread waiter([&] {
      runner_.join();
      done = true;
    });
    const auto deadline = Clock::now() + limit;
    while (!done && Clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (!done) io_.stop();  // unblock, so the test fails instead of hanging
    waiter.join();
    return done;
  }
  void TearDown() override {
    if (runner_.joinable()) stop_within(std::chrono::seconds(15));
  }
  unsigned short port() const { return server_->port(); }

  boost::asio::io_context io_;
  std::unique_ptr<nmt::tracker::HttpServer> server_;
  std::thread runner_;
};

nmt::tracker::Response ok_json() {
  return {200, "{\"ok\":true}"};
}

TEST_F(InProcessServer, HandlerExceptionIs500AndClosesOnlyThatConnection) {
  start([](const nmt::tracker::Request& r) {
    if (r.path == "/boom") throw std::runtime_error("store exploded");
    return ok_json();
  });
  Connection bystander(port());
  EXPECT_EQ(bystander.get("/before").status, 200);
  Connection victim(port());
  const auto reply = victim.get("/boom");
  EXPECT_EQ(reply.status, 500);
  EXPECT_FALSE(reply.keep_alive);
  EXPECT_TRUE(victim.socket().closed_within(std::chrono::seconds(15)));  // not after 30 s
  EXPECT_EQ(bystander.get("/after").status, 200);
  EXPECT_EQ(server_->requests_served(), 3u);
}

TEST_F(InProcessServer, StopLetsTheInFlightRequestFinish) {
  std::atomic<bool> entered{false};
  start([&](const nmt::tracker::Request& r) {
    if (r.path == "/slow") {
      entered = true;
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    }
    return ok_json();
  });
  Connection idle(port());
  EXPECT_EQ(idle.get("/warm").status, 200);
  Connection busy(port());
  busy.socket().send_raw("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n");
  while (!entered) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  server_->stop();
  const auto reply = busy.read_reply();
  EXPECT_EQ(reply.status, 200);
  EXPECT_FALSE(reply.keep_alive);                                      // answered, then closed
  EXPECT_TRUE(idle.socket().closed_within(std::chrono::seconds(15)));  // not after 30 s
  EXPECT_THROW(Connection{port()}, std::system_error);                 // no longer accepting
  EXPECT_TRUE(stop_within(std::chrono::seconds(15)));
}

}  // namespace
