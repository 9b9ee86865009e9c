// nmt-trackerd under hostile clients: the real binary on 127.0.0.1, its resident memory read from
// /proc while deep, oversized and unauthenticated bodies arrive; idle connections from one address
// while another address is served; half-sent headers without the token from many addresses while
// a client with the token is served; every rank of a 128-node job served at the defaults, the
// daemon started with a soft limit of 1024 open files; the connection cap fitted to the open-file
// limit; idle and header timeouts; bounded metric answers; overlong metric keys and the per-run
// limits; out-of-range numbers; the database file's mode; port files shared by two daemons.

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <thread>

#include "common/open_file_limit.h"
#include "tests/tracker_daemon_harness.h"
#include "tracker/server/http_server.h"

namespace {

using nlohmann::json;
using nmt::testing::Connection;
using nmt::testing::Daemon;
using nmt::testing::proc_status_kb;
using nmt::testing::ServedDaemon;
using nmt::testing::TempDir;
using nmt::testing::TestSocket;
using Clock = std::chrono::steady_clock;
namespace http = boost::beast::http;

// The bound the daemon's peak resident memory must stay under in every hostile load below. An
// idle daemon is about 10 MB; before these limits a 16 MB body of '[' took it to 670 MB.
constexpr long kMemoryBoundKb = 100 * 1024;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string post_header(const std::string& target, std::size_t length,
                        const std::string& extra = "") {
  return "POST " + target + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" + extra +
         "Content-Length: " + std::to_string(length) + "\r\n\r\n";
}

std::int64_t create_run(Connection& c) {
  const auto reply = c.post("/api/runs", {{"experiment", "limits"}, {"name", "run"}});
  EXPECT_EQ(reply.status, 200) << reply.body;
  return reply.json().at("run_id").get<std::int64_t>();
}

// Sends up to `total` bytes of filler; returns how many the daemon took before it stopped reading
// (the send timed out) or closed the connection.
std::size_t push_bytes(TestSocket& socket, std::size_t total) {
  const std::string chunk(64 * 1024, ' ');
  std::size_t sent = 0;
  boost::beast::error_code ec;
  while (sent < total && !ec) sent += socket.write_some(boost::asio::buffer(chunk), ec);
  return sent;
}

TEST(TrackerLimits, DeepNestingIs400AndMemoryStaysLow) {
  TempDir dir;
  Daemon daemon(dir, {});
  const std::string body(16'000'000, '[');  // the probe's body, under the 16 MiB body limit
  std::vector<std::thread> clients;
  std::vector<nmt::testing::Reply> replies(4);
  for (std::size_t i = 0; i < replies.size(); ++i) {
    clients.emplace_back([&, i] {
      replies[i] = Connection(daemon.port()).request(http::verb::post, "/api/runs", body);
    });
  }
  for (auto& client : clients) client.join();
  for (const auto& reply : replies) {
    EXPECT_EQ(reply.status, 400) << reply.body;
    EXPECT_EQ(reply.json().at("field"), "body");
    EXPECT_NE(reply.body.find("limit of 64 levels"), std::string::npos) << reply.body;
  }
  const long peak = proc_status_kb(daemon.pid(), "VmHWM");
  RecordProperty("daemon_peak_rss_kb", static_cast<int>(peak));
  std::cout << "4 x 16 MB of '[': daemon peak RSS " << peak / 1024 << " MB\n";
  EXPECT_LT(peak, kMemoryBoundKb);
  EXPECT_EQ(Connection(daemon.port()).get("/api/health").status, 200);
}

TEST(TrackerLimits, OversizedBodyIs413WithoutReadingIt) {
  TempDir dir;
  Daemon daemon(dir, {"--body-limit", "1M"});
  // Declared too large: refused from the header, before a byte of the body is sent.
  {
    Connection c(daemon.port());
    c.socket().send_raw(post_header("/api/runs", std::size_t{1} << 30));
    const auto reply = c.read_reply();
    EXPECT_EQ(reply.status, 413);
    EXPECT_NE(reply.body.find("1048576"), std::string::npos) << reply.body;
    EXPECT_FALSE(reply.keep_alive);
  }
  // A client that streams on regardless: the daemon drops a bounded amount, then closes.
  {
    TestSocket socket(daemon.port(), std::chrono::seconds(3));
    socket.send_raw(post_header("/api/runs", std::size_t{256} << 20));
    const std::size_t taken = push_bytes(socket, std::size_t{256} << 20);
    std::cout << "a 256 MB body against a 1 MB limit: the daemon took " << taken / (1 << 20)
              << " MB before it stopped reading\n";
    EXPECT_LT(taken, std::size_t{64} << 20);
  }
  // Chunked: no length up front; the limit is checked as chunks arrive.
  {
    TestSocket socket(daemon.port(), std::chrono::seconds(3));
    socket.send_raw("POST /api/runs HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n");
    const std::string chunk = "10000\r\n" + std::string(0x10000, ' ') + "\r\n";
    std::size_t taken = 0;
    boost::beast::error_code ec;
    for (int i = 0; i < 4096 && !ec; ++i)
      taken += socket.write_some(boost::asio::buffer(chunk), ec);
    EXPECT_LT(taken, std::size_t{64} << 20);
  }
  const long peak = proc_status_kb(daemon.pid(), "VmHWM");
  std::cout << "oversized bodies: daemon peak RSS " << peak / 1024 << " MB\n";
  EXPECT_LT(peak, kMemoryBoundKb);
  EXPECT_EQ(Connection(daemon.port()).get("/api/health").status, 200);
}

TEST(TrackerLimits, UnauthenticatedBodyIs401BeforeItIsRead) {
  TempDir dir;
  nmt::testing::write_text(dir.file("token"), "s3cret-token\n");
  Daemon daemon(dir, {"--token-file", dir.file("token")});
  constexpr int kClients = 20;
  constexpr std::size_t kDeclared = 16'000'000, kSent = 1u << 20;
  std::vector<std::unique_ptr<Connection>> hostile;
  for (int i = 0; i < kClients; ++i) {
    hostile.push_back(std::make_unique<Connection>(daemon.port()));
    // The header alone: the answer cannot depend on a body that has not been sent.
    hostile.back()->socket().send_raw(post_header("/api/runs/1/metrics", kDeclared));
    const auto reply = hostile.back()->read_reply();
    EXPECT_EQ(reply.status, 401) << reply.body;
    EXPECT_FALSE(reply.keep_alive);
  }
  // Half of each body follows anyway, and the connections stay open.
  std::size_t pushed = 0;
  for (auto& c : hostile) pushed += push_bytes(c->socket(), kSent);
  const long peak = proc_status_kb(daemon.pid(), "VmHWM");
  std::cout << kClients << " unauthenticated half-sent 16 MB bodies (" << pushed / (1 << 20)
            << " MB sent): daemon peak RSS " << peak / 1024 << " MB\n";
  EXPECT_LT(peak, kMemoryBoundKb);
  Connection healthy(daemon.port(), "s3cret-token");
  EXPECT_EQ(healthy.post("/api/runs", {{"experiment", "e"}, {"name", "n"}}).status, 200);
}

TEST(TrackerLimits, OneAddressOverItsLimitDoesNotStarveAnother) {
  constexpr int kLimit = 8, kExtra = 12, kHealthy = 20;
  TempDir dir;
  Daemon daemon(dir, {"--max-connections-per-client", std::to_string(kLimit)});
  std::vector<std::unique_ptr<Connection>> idle;
  for (int i = 0; i < kLimit; ++i) {
    idle.push_back(std::make_unique<Connection>(daemon.port()));
    ASSERT_EQ(idle.back()->get("/api/health").status, 200);  // now surely counted
  }
  // The same address past its limit: answered 503 (or reset) and closed, at once on an idle
  // machine; the bound is for a loaded one.
  for (int i = 0; i < kExtra; ++i) {
    TestSocket extra(daemon.port(), std::chrono::seconds(5));
    EXPECT_TRUE(extra.closed_within(std::chrono::seconds(20))) << "connection " << i;
  }
  // Another address is served throughout, promptly.
  std::vector<double> latencies;
  for (int i = 0; i < kHealthy; ++i) {
    const auto start = Clock::now();
    EXPECT_EQ(Connection(daemon.port(), "", "127.0.0.2").get("/api/health").status, 200);
    latencies.push_back(ms_since(start));
  }
  std::sort(latencies.begin(), latencies.end());
  RecordProperty("healthy_median_ms", static_cast<int>(latencies[kHealthy / 2]));
  std::cout << "healthy client from 127.0.0.2 beside " << kLimit + kExtra
            << " connections from 127.0.0.1: median " << latencies[kHealthy / 2] << " ms, max "
            << latencies.back() << " ms\n";
  EXPECT_NE(daemon.log().find("--max-connections-per-client"), std::string::npos);
  // Once the idle ones close, the first address is served again: as soon as the daemon has seen
  // them close, which a loaded machine may delay.
  idle.clear();
  bool served = false;
  const auto deadline = Clock::now() + std::chrono::seconds(30);
  while (!served && Clock::now() < deadline) {
    try {
      served = Connection(daemon.port()).get("/api/health").status == 200;
    } catch (const std::exception&) {
      // Refused or reset while the daemon still counts the closed ones: try again.
    }
    if (!served) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(served);
}

TEST(TrackerLimits, ConnectionCapAnswers503) {
  TempDir dir;
  Daemon daemon(dir, {"--max-connections", "2"});
  Connection a(daemon.port()), b(daemon.port());
  ASSERT_EQ(a.get("/api/health").status, 200);
  ASSERT_EQ(b.get("/api/health").status, 200);
  Connection over(daemon.port(), "", "127.0.0.3");
  const auto reply = over.read_reply();  // sent at accept, before any request
  EXPECT_EQ(reply.status, 503);
  EXPECT_NE(reply.body.find("(--max-connections)"), std::string::npos) << reply.body;
  EXPECT_FALSE(reply.keep_alive);
  EXPECT_EQ(a.get("/api/health").status, 200);  // the open ones are untouched
}

// A connection that has sent part of a request header and no token, from `source`; errors are
// ignored (the daemon may refuse or close it at once).
std::unique_ptr<TestSocket> half_sent_header(unsigned short port, const char* source) {
  auto socket = std::make_unique<TestSocket>(port, std::chrono::seconds(5), source);
  const std::string partial = "POST /api/runs/1/metrics HTTP/1.1\r\nHost: x\r\nContent-Le";
  boost::beast::error_code ignored;
  socket->write_some(boost::asio::buffer(partial), ignored);
  return socket;
}

// How many of `sockets` the daemon has closed, waiting up to `limit` for `expected` of them.
std::size_t count_closed(const std::vector<std::unique_ptr<TestSocket>>& sockets,
                         std::size_t expected, std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  std::vector<bool> closed(sockets.size(), false);
  std::size_t count = 0;
  while (true) {
    for (std::size_t i = 0; i < sockets.size(); ++i) {
      if (!closed[i] && sockets[i]->closed_now()) {
        closed[i] = true;
        ++count;
      }
    }
    if (count >= expected || Clock::now() >= deadline) return count;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// A status, or 0 when the daemon reset or closed the connection instead of answering.
int status_of(const std::function<nmt::testing::Reply()>& request) {
  try {
    return request().status;
  } catch (const std::exception&) {
    return 0;
  }
}

// Half-sent headers without the token from many addresses, each within its per-address cap, fill
// the global cap many times over (a hostile load of 560 from 10 addresses once left a client with
// the token 503 for 98 of 137 requests). Connections that have not sent the token hold only part
// of the cap, and a newcomer closes the oldest of them to get in.
TEST(TrackerLimits, HalfSentHeadersFromManyAddressesDoNotLockOutTheToken) {
  constexpr int kAddresses = 20, kPerClient = 8, kCap = 40, kRequests = 50;
  constexpr std::size_t kUnprovenShare = kCap - kCap / 4;  // the default reserve: a quarter
  TempDir dir;
  nmt::testing::write_text(dir.file("token"), "s3cret-token\n");
  // Timeouts far beyond the test, so that only the caps decide who is served.
  Daemon daemon(dir, {"--token-file", dir.file("token"), "--max-connections", std::to_string(kCap),
                      "--max-connections-per-client", std::to_string(kPerClient),
                      "--header-timeout", "120", "--idle-timeout", "120", "--read-timeout", "120"});
  Connection kept(daemon.port(), "s3cret-token");  // proven before the flood: never evicted
  ASSERT_EQ(kept.get("/api/runs").status, 200);

  std::vector<std::string> addresses;
  for (int i = 0; i < kAddresses; ++i) addresses.push_back("127.0.0." + std::to_string(i + 2));
  std::vector<std::unique_ptr<TestSocket>> hostile;
  std::size_t next = 0;
  const auto flood = [&](int count) {
    for (int i = 0; i < count; ++i, ++next) {
      hostile.push_back(
          half_sent_header(daemon.port(), addresses[next % addresses.size()].c_str()));
    }
  };
  flood(kAddresses * kPerClient);  // 160: four times the whole cap

  int served = 0;
  std::vector<int> statuses;
  for (int i = 0; i < kRequests; ++i) {
    flood(2);  // the unproven share stays full throughout
    const int status =
        status_of([&] { return Connection(daemon.port(), "s3cret-token").get("/api/runs"); });
    served += status == 200 ? 1 : 0;
    statuses.push_back(status);
  }
  std::cout << served << " of " << kRequests << " requests with the token served beside "
            << hostile.size() << " half-sent headers from " << kAddresses << " addresses\n";
  EXPECT_EQ(served, kRequests) << "statuses: " << ::testing::PrintToString(statuses);
  EXPECT_EQ(kept.get("/api/runs").status, 200);
  // The half-sent headers held no more than their share: the daemon closed the others.
  const std::size_t closed =
      count_closed(hostile, hostile.size() - kUnprovenShare, std::chrono::seconds(30));
  EXPECT_GE(closed, hostile.size() - kUnprovenShare);
  EXPECT_NE(daemon.log().find("closing connections that sent no request with the token"),
            std::string::npos)
      << daemon.log();
}

// This process's soft open-file limit lowered to `soft` while it lives: a daemon started meanwhile
// starts with it, as one started from a login shell does.
class LoweredOpenFileLimit {
 public:
  explicit LoweredOpenFileLimit(rlim_t soft) {
    ::getrlimit(RLIMIT_NOFILE, &saved_);
    const rlimit lowered{std::min(soft, saved_.rlim_cur), saved_.rlim_max};
    ::setrlimit(RLIMIT_NOFILE, &lowered);
  }
  ~LoweredOpenFileLimit() { ::setrlimit(RLIMIT_NOFILE, &saved_); }
  LoweredOpenFileLimit(const LoweredOpenFileLimit&) = delete;
  LoweredOpenFileLimit& operator=(const LoweredOpenFileLimit&) = delete;

 private:
  rlimit saved_{};
};

// The 1,024 ranks of a 128-node job, 8 to a node, each holding a connection of its own: a daemon
// at its defaults serves them all at once, also when started with a soft limit of 1024 open files
// (it raises it to the hard limit).
TEST(TrackerLimits, DefaultsServeEveryRankOfA128NodeJob) {
  constexpr int kNodes = 128, kRanksPerNode = 8;
  const nmt::OpenFileLimit files = nmt::raise_open_file_limit();  // for this side's connections
  if (files.soft < 1200) {
    GTEST_SKIP() << "a process may open at most " << files.hard << " files here: too few for "
                 << kNodes * kRanksPerNode << " connections";
  }
  TempDir dir;
  std::optional<Daemon> daemon;
  {
    const LoweredOpenFileLimit login_shell(1024);
    daemon.emplace(dir, std::vector<std::string>{});
  }
  std::vector<std::unique_ptr<Connection>> ranks;
  for (int node = 0; node < kNodes; ++node) {
    const std::string address = "127.0.1." + std::to_string(node + 1);
    for (int r = 0; r < kRanksPerNode; ++r) {
      ranks.push_back(std::make_unique<Connection>(daemon->port(), "", address.c_str()));
      ASSERT_EQ(status_of([&] { return ranks.back()->get("/api/health"); }), 200)
          << "rank " << ranks.size() - 1 << " from " << address << "\n"
          << daemon->log();
    }
  }
  for (std::size_t rank = 0; rank < ranks.size(); ++rank) {  // every one still open
    ASSERT_EQ(status_of([&] { return ranks[rank]->get("/api/health"); }), 200) << "rank " << rank;
  }
  EXPECT_NE(daemon->log().find("soft limit raised from 1024"), std::string::npos) << daemon->log();
}

// A connection past the cap is answered 503 only while the daemon has a descriptor to accept it
// with: the cap comes down to what the open-file limit leaves room for.
TEST(TrackerLimits, TheConnectionCapFitsTheOpenFileLimit) {
  using nmt::tracker::fit_to_open_files;
  nmt::tracker::ServerOptions options;
  EXPECT_EQ(fit_to_open_files(options, 1u << 20), std::nullopt);
  EXPECT_EQ(options.max_connections, 4096u);
  EXPECT_EQ(fit_to_open_files(options, 1024), std::optional<std::size_t>(4096));
  EXPECT_EQ(options.max_connections, 1024 - nmt::tracker::kDescriptorsBesideConnections);
  EXPECT_NO_THROW(options.validate());
  EXPECT_EQ(options.unproven_limit(), options.max_connections - options.max_connections / 4);
  EXPECT_TRUE(fit_to_open_files(options, 100));  // at least half of a small limit
  EXPECT_EQ(options.max_connections, 50u);
}

TEST(TrackerLimits, ReservedConnectionsMustLeaveRoom) {
  TempDir dir;
  const int status = Daemon::run_to_exit(
      {"--db", dir.file("tracker.db"), "--max-connections", "4", "--reserved-connections", "4"},
      dir.file("daemon.log"));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0);
  EXPECT_NE(nmt::testing::read_text(dir.file("daemon.log")).find("reserved_connections"),
            std::string::npos);
}

// The idle and header timeouts are 1 s; the bounds of the waits leave a loaded machine its slack,
// and stay far below the 60 s read timeout that must not be the one closing them.
TEST(TrackerLimits, SilentConnectionsAreClosedByTheIdleAndHeaderTimeouts) {
  TempDir dir;
  Daemon daemon(dir, {"--idle-timeout", "1", "--header-timeout", "1", "--read-timeout", "60"});
  const auto start = Clock::now();
  TestSocket silent(daemon.port());
  Connection kept(daemon.port());
  ASSERT_EQ(kept.get("/api/health").status, 200);
  TestSocket trickle(daemon.port());
  trickle.send_raw("GET /api/heal");  // a header that never ends
  EXPECT_TRUE(silent.closed_within(std::chrono::seconds(20)));
  EXPECT_TRUE(kept.socket().closed_within(std::chrono::seconds(20)));
  EXPECT_TRUE(trickle.closed_within(std::chrono::seconds(20)));  // not the 60 s read timeout
  EXPECT_GT(ms_since(start), 800.0);                             // not before the timeouts
}

TEST(TrackerLimits, MetricsOverThePointLimitAreBoundedAndSaySo) {
  ServedDaemon served({"--max-response-points", "500"});
  auto& [dir, daemon, c] = served;
  const auto run = create_run(c);
  const std::string target = "/api/runs/" + std::to_string(run) + "/metrics";
  for (int batch = 0; batch < 10; ++batch) {
    json points = json::array();
    for (int i = 0; i < 2000; ++i) {
      points.push_back({{"key", "loss"}, {"step", batch * 2000 + i}, {"value", 1.0 / (i + 1)}});
    }
    ASSERT_EQ(c.post(target, {{"rank", 0}, {"sequence", batch}, {"points", points}}).status, 200);
  }
  for (const std::string query :
       {"key=loss", "key=loss&max_points=100000", "key=loss&max_points=50"}) {
    const auto reply = c.get(target + "?" + query);
    ASSERT_EQ(reply.status, 200);
    const json body = reply.json();
    EXPECT_LE(body.at("points").size(), query.find("=50") != std::string::npos ? 50u : 500u);
    EXPECT_EQ(body.at("downsampled"), true) << query;
    EXPECT_EQ(body.at("total_points"), 20000) << query;
    EXPECT_LT(reply.body.size(), 100'000u) << query;
  }
}

TEST(TrackerLimits, OutOfRangeNumberIs400NotAStoreFailure) {
  ServedDaemon served;
  auto& [dir, daemon, c] = served;
  const auto run = create_run(c);
  const auto reply = c.request(
      http::verb::post, "/api/runs/" + std::to_string(run) + "/metrics",
      R"({"rank": 0, "sequence": 0, "points": [{"key": "loss", "step": 1, "value": 1e999}]})");
  EXPECT_EQ(reply.status, 400) << reply.body;
  EXPECT_EQ(reply.json().at("field"), "points[0].value");
  EXPECT_TRUE(reply.keep_alive);
  EXPECT_EQ(daemon.log().find("store failure"), std::string::npos) << daemon.log();
}

// Metric keys of megabytes, each in a body under the body limit (15 of 5 to 10 MB once made every
// read of their run a 125 MB answer and the daemon 512 MB resident).
TEST(TrackerLimits, MegabyteMetricKeysAre400AndTheRunStaysSmall) {
  ServedDaemon served;
  auto& [dir, daemon, c] = served;
  const auto run = create_run(c);
  const std::string target = "/api/runs/" + std::to_string(run) + "/metrics";
  for (int sequence = 0; sequence < 4; ++sequence) {
    const json points =
        json::array({{{"key", std::string(6u << 20, 'k')}, {"step", 1}, {"value", 1.0}}});
    const auto reply = c.post(target, {{"rank", 0}, {"sequence", sequence}, {"points", points}});
    ASSERT_EQ(reply.status, 400) << reply.body.substr(0, 200);
    EXPECT_EQ(reply.json().at("field"), "points[0].key");
    EXPECT_NE(reply.body.find("limit of 256 bytes"), std::string::npos) << reply.body;
    EXPECT_LT(reply.body.size(), 1000u);
  }
  const auto detail = c.get("/api/runs/" + std::to_string(run));
  ASSERT_EQ(detail.status, 200);
  EXPECT_LT(detail.body.size(), 4096u);
  EXPECT_TRUE(detail.json().at("metric_keys").empty());
  const long peak = proc_status_kb(daemon.pid(), "VmHWM");
  std::cout << "4 metric keys of 6 MB: refused; run answer " << detail.body.size()
            << " bytes; daemon peak RSS " << peak / 1024 << " MB\n";
  EXPECT_LT(peak, kMemoryBoundKb);
}

// The flags reach the handler.
TEST(TrackerLimits, WriteLimitFlagsSetTheLimits) {
  ServedDaemon served({"--max-name-bytes", "8", "--max-metric-keys", "2"});
  auto& [dir, daemon, c] = served;
  const auto run = create_run(c);
  const std::string target = "/api/runs/" + std::to_string(run) + "/metrics";
  const auto point = [](const std::string& key) {
    return json{{"key", key}, {"step", 1}, {"value", 1.0}};
  };
  auto reply = c.post(target, {{"rank", 0}, {"sequence", 0}, {"points", {point("123456789")}}});
  EXPECT_EQ(reply.status, 400);
  EXPECT_NE(reply.body.find("limit of 8 bytes"), std::string::npos) << reply.body;
  reply = c.post(target, {{"rank", 0}, {"sequence", 0}, {"points", {point("a"), point("b")}}});
  EXPECT_EQ(reply.status, 200) << reply.body;
  reply = c.post(target, {{"rank", 0}, {"sequence", 1}, {"points", {point("c")}}});
  EXPECT_EQ(reply.status, 400);
  EXPECT_EQ(reply.json().at("field"), "points");
  EXPECT_NE(reply.body.find("--max-metric-keys"), std::string::npos) << reply.body;
}

TEST(TrackerLimits, ContentLimitFlagSetsTheLimit) {
  ServedDaemon served({"--max-content-bytes", "16"});
  auto& [dir, daemon, c] = served;
  const std::string target = "/api/runs/" + std::to_string(create_run(c)) + "/artifacts";
  const auto artifact = [](const std::string& content) {
    return json{{"kind", "analysis"}, {"path", "analysis.md"}, {"content", content}};
  };
  auto reply = c.post(target, artifact(std::string(16, 'x')));
  EXPECT_EQ(reply.status, 200) << reply.body;
  reply = c.post(target, artifact(std::string(17, 'x')));
  EXPECT_EQ(reply.status, 400);
  EXPECT_EQ(reply.json().at("field"), "content");
  EXPECT_NE(reply.body.find("--max-content-bytes"), std::string::npos) << reply.body;
}

TEST(TrackerLimits, DatabaseFilesAreOwnerOnly) {
  ServedDaemon served;
  auto& [dir, daemon, c] = served;
  create_run(c);
  for (const char* name : {"tracker.db", "tracker.db-wal", "tracker.db-shm"}) {
    struct stat info {};
    ASSERT_EQ(::stat(dir.file(name).c_str(), &info), 0) << name;
    EXPECT_EQ(info.st_mode & 0777, 0600u) << name;
  }
}

TEST(TrackerLimits, EachDaemonRemovesOnlyItsOwnPortFile) {
  TempDir dir;
  const std::string shared = dir.file("shared.port");
  Daemon first(dir, {}, dir.file("first.db"), shared);
  Daemon second(dir, {}, dir.file("second.db"), shared);  // overwrites the file
  ASSERT_NE(first.port(), second.port());
  const int status = first.signal_and_wait(SIGTERM);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << first.log();
  ASSERT_TRUE(std::filesystem::exists(shared)) << "the first daemon removed the second's file";
  EXPECT_EQ(nmt::testing::read_text(shared), std::to_string(second.port()) + "\n");
  EXPECT_EQ(Connection(second.port()).get("/api/health").status, 200);
  second.signal_and_wait(SIGTERM);
  EXPECT_FALSE(std::filesystem::exists(shared));
}

}  // namespace
