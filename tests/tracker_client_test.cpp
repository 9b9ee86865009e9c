// The tracker client against the real daemon (NMT_TRACKERD) and the real CLI (NMT_TRACKER_CLI):
// every point delivered, spooling while the daemon is down and exactly-once replay when it is back
// (also by the next client, also after a replay whose truncation was lost), a full queue that never
// blocks, a lost response whose retry is not stored twice (a metrics batch or the registration),
// runs never merged by name but resumed by uid and attempt, and what the CLI prints; and how every
// client finds the daemon (flags, then config, then environment).

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <nlohmann/json.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <regex>
#include <set>
#include <thread>

#include "tests/test_utils.h"
#include "tests/tracker_test_runs.h"
#include "tracker/client/daemon_address.h"
#include "tracker/client/http_client.h"
#include "tracker/client/spool.h"
#include "tracker/client/tracker_client.h"
#include "tracker/client/tracker_reader.h"

namespace nmt::tracker {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;
namespace fs = std::filesystem;

// A port nobody listens on (bound and released, never listened on, so no TIME_WAIT).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ::close(fd);
  return ntohs(addr.sin_port);
}

json get(const std::string& url, const std::string& target) {
  HttpClient http(parse_url(url), "", 30s);
  const auto response = http.request("GET", target);
  EXPECT_EQ(response.status, 200) << target << ": " << response.body;
  return json::parse(response.body);
}

json series(const std::string& url, std::int64_t run, const std::string& key) {
  return get(url, "/api/runs/" + std::to_string(run) + "/metrics?key=" + url_encode(key))["points"];
}

// Polls until `done()` holds, at most `limit`. The client's worker spools in the background, and
// its fsync can take far longer than usual behind a build's writes on a loaded machine.
template <class Predicate>
bool eventually(Predicate done, std::chrono::milliseconds limit = 60s) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

// Fails unless `points` holds steps 0..n-1, each exactly once.
void expect_each_step_once(const json& points, int n) {
  EXPECT_EQ(points.size(), static_cast<std::size_t>(n));
  std::set<std::int64_t> steps;
  for (const auto& p : points) steps.insert(p["step"].get<std::int64_t>());
  EXPECT_EQ(steps.size(), static_cast<std::size_t>(n));
  EXPECT_EQ(*steps.begin(), 0);
  EXPECT_EQ(*steps.rbegin(), n - 1);
}

std::uintmax_t file_size(const std::string& path) {
  return fs::exists(path) ? fs::file_size(path) : 0;
}

TEST(TrackerClient, DeliversTenThousandPointsAndRunRecords) {
  testing::TempDir dir;
  Daemon daemon(dir.path());
  const auto options = options_for(daemon.url(), dir);
  TrackerClient client(options);
  const auto run = client.start_run(run_info("ten-thousand"));
  ASSERT_TRUE(run.has_value());
  for (int step = 0; step < 10000; ++step) client.log_metric("train/loss", step, step * 0.5);
  client.log_eval({"valid", 10000, "ckpt.h5", 25.8, std::nullopt, 4.92, "nrefs:1"});
  client.log_artifact({"checkpoint", "ckpt.h5", 10000, std::nullopt});
  client.set_status(RunStatus::kFinished);
  ASSERT_TRUE(client.flush(60s));

  EXPECT_EQ(client.stats().delivered_points, 10000);
  const json points = series(daemon.url(), *run, "train/loss");
  expect_each_step_once(points, 10000);
  EXPECT_DOUBLE_EQ(points[1234]["value"].get<double>(), 617.0);
  const json detail = get(daemon.url(), "/api/runs/" + std::to_string(*run));
  EXPECT_EQ(detail["status"], "finished");
  EXPECT_EQ(detail["evals"].size(), 1u);
  EXPECT_EQ(detail["artifacts"].size(), 1u);
  EXPECT_EQ(file_size(options.spool_path), 0u);  // nothing had to be spooled
}

TEST(TrackerClient, SpoolsWhileDaemonIsDownAndDeliversOnceWhenItStarts) {
  testing::TempDir dir;
  const int port = free_port();
  const auto options = options_for("http://127.0.0.1:" + std::to_string(port), dir);
  TrackerClient client(options);
  EXPECT_FALSE(client.start_run(run_info("late-daemon")).has_value());
  for (int step = 0; step < 1234; ++step) client.log_metric("train/loss", step, 1.0);
  client.set_status(RunStatus::kFinished);
  EXPECT_FALSE(client.flush(300ms));  // nobody answers
  // Spooled by the worker, which the short flush above need not have waited for.
  EXPECT_TRUE(eventually([&] { return client.stats().spooled_points == 1234u; }))
      << client.stats().spooled_points << " points spooled";
  EXPECT_GT(file_size(options.spool_path), 0u);

  Daemon daemon(dir.path(), port);
  ASSERT_TRUE(client.flush(60s));
  ASSERT_TRUE(client.run_id().has_value());
  expect_each_step_once(series(daemon.url(), *client.run_id(), "train/loss"), 1234);
  EXPECT_EQ(get(daemon.url(), "/api/runs/" + std::to_string(*client.run_id()))["status"],
            "finished");
  EXPECT_EQ(file_size(options.spool_path), 0u);  // truncated after the acknowledged replay
  EXPECT_EQ(client.stats().delivered_points, 1234);
}

TEST(TrackerClient, NextClientReplaysTheSpoolAndARepeatedReplayStoresNothing) {
  testing::TempDir dir;
  auto daemon = std::make_unique<Daemon>(dir.path());
  const int port = daemon->port();
  auto options = options_for(daemon->url(), dir);
  std::int64_t run = 0;
  {
    TrackerClient first(options);
    run = first.start_run(run_info("requeued")).value();
    daemon->stop();  // the daemon dies mid-run; the trainer ends and its client with it
    for (int step = 0; step < 700; ++step) first.log_metric("train/loss", step, 2.0);
  }
  ASSERT_GT(file_size(options.spool_path), 0u);
  const std::string copy = dir.file("spool_copy");
  fs::copy_file(options.spool_path, copy);

  daemon = std::make_unique<Daemon>(dir.path(), port);
  {
    TrackerClient second(options);
    second.attach_run(run);
    ASSERT_TRUE(second.flush(60s));
  }
  expect_each_step_once(series(daemon->url(), run, "train/loss"), 700);
  // A crash between the replay and the truncation leaves the spool as it was: replay it again.
  fs::copy_file(copy, options.spool_path, fs::copy_options::overwrite_existing);
  {
    TrackerClient third(options);
    third.attach_run(run);
    ASSERT_TRUE(third.flush(60s));
    EXPECT_EQ(third.stats().delivered_points, 700);  // acknowledged as duplicates
  }
  expect_each_step_once(series(daemon->url(), run, "train/loss"), 700);
}

TEST(TrackerClient, FullQueueNeverBlocks) {
  testing::TempDir dir;
  auto options = options_for("http://127.0.0.1:" + std::to_string(free_port()), dir);
  options.queue_capacity = 64;
  options.batch_size = 16;
  TrackerClient client(options);
  constexpr int kPoints = 200000;
  const auto start = std::chrono::steady_clock::now();
  for (int step = 0; step < kPoints; ++step) client.log_metric("train/loss", step, 1.0);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  // Tens of milliseconds on an idle machine; had log_metric waited for room, 12,500 fsync'd spool
  // appends would take far longer than this bound for a loaded one.
  EXPECT_LT(elapsed, 5s);
  EXPECT_FALSE(client.flush(200ms));
  // Every point is dropped or spooled, once the worker has spooled what it took from the queue
  // (the short flush above need not have waited for that).
  const auto accounted = [&] {
    const auto s = client.stats();
    return s.dropped_points + static_cast<std::int64_t>(s.spooled_points) == kPoints;
  };
  EXPECT_TRUE(eventually(accounted));
  const auto stats = client.stats();
  EXPECT_GT(stats.dropped_points, 0);
  EXPECT_GT(stats.spooled_points, 0u);
  EXPECT_EQ(stats.dropped_points + static_cast<std::int64_t>(stats.spooled_points), kPoints);
}

// Forwards HTTP requests to the daemon, but answers the first POST whose target ends in `lose`
// (a metrics batch, or the registration) by closing the connection: the daemon stored it, the
// client never heard so. Records the sequence number of every metrics request it forwards, and
// counts the POSTs to `lose`.
class LossyProxy {
 public:
  explicit LossyProxy(const std::string& upstream, std::string lose = "/metrics")
      : upstream_(upstream), lose_(std::move(lose)) {
    namespace asio = boost::asio;
    acceptor_.open(asio::ip::tcp::v4());
    acceptor_.bind({asio::ip::make_address("127.0.0.1"), 0});
    acceptor_.listen();
    accept_thread_ = std::thread([this] { accept_loop(); });
  }
  ~LossyProxy() {
    stop_ = true;
    boost::asio::ip::tcp::socket wake(io_);  // unblocks accept()
    boost::system::error_code ignored;
    wake.connect(acceptor_.local_endpoint(), ignored);
    accept_thread_.join();
    for (auto& t : sessions_) t.join();
  }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(acceptor_.local_endpoint().port());
  }
  std::vector<std::int64_t> sequences() {
    std::lock_guard lock(mutex_);
    return sequences_;
  }
  int lossy_posts() {
    std::lock_guard lock(mutex_);
    return lossy_posts_;
  }

 private:
  void accept_loop() {
    while (true) {
      boost::asio::ip::tcp::socket socket(io_);
      boost::system::error_code ec;
      acceptor_.accept(socket, ec);
      if (stop_ || ec) return;
      sessions_.emplace_back([this, s = std::move(socket)]() mutable { session(s); });
    }
  }
  void session(boost::asio::ip::tcp::socket& socket) {
    namespace http = boost::beast::http;
    HttpClient upstream(parse_url(upstream_), "", 30s);
    boost::beast::flat_buffer buffer;
    boost::system::error_code ec;
    while (true) {
      http::request<http::string_body> request;
      http::read(socket, buffer, request, ec);
      if (ec) return;
      const std::string target(request.target());
      const auto ends_in = [&](const std::string& suffix) {
        return request.method() == http::verb::post && target.size() >= suffix.size() &&
               target.compare(target.size() - suffix.size(), suffix.size(), suffix) == 0;
      };
      const auto answer =
          upstream.request(std::string(request.method_string()), target, request.body());
      {
        std::lock_guard lock(mutex_);
        if (ends_in("/metrics")) {
          sequences_.push_back(json::parse(request.body())["sequence"].get<std::int64_t>());
        }
        if (ends_in(lose_) && ++lossy_posts_ == 1) return;  // the response is lost
      }
      http::response<http::string_body> response{static_cast<http::status>(answer.status), 11};
      response.set(http::field::content_type, "application/json");
      response.body() = answer.body;
      response.prepare_payload();
      http::write(socket, response, ec);
      if (ec) return;
    }
  }

  std::string upstream_;
  std::string lose_;
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_{io_};
  std::atomic<bool> stop_{false};
  std::thread accept_thread_;
  std::vector<std::thread> sessions_;
  std::mutex mutex_;
  std::vector<std::int64_t> sequences_;
  int lossy_posts_ = 0;
};

TEST(TrackerClient, RetryAfterLostResponseIsNotStoredTwice) {
  testing::TempDir dir;
  Daemon daemon(dir.path());
  LossyProxy proxy(daemon.url());
  std::int64_t run = 0;
  {
    TrackerClient client(options_for(proxy.url(), dir));
    run = client.start_run(run_info("lost-response")).value();
    for (int step = 0; step < 300; ++step) client.log_metric("train/loss", step, 3.0);
    ASSERT_TRUE(client.flush(60s));
  }
  const auto sequences = proxy.sequences();
  ASSERT_GE(sequences.size(), 2u);
  EXPECT_EQ(sequences[0], sequences[1]);  // the same batch, sent again
  expect_each_step_once(series(daemon.url(), run, "train/loss"), 300);
}

// The spool's retry of a registration whose answer was lost: with the run's uid and attempt it
// is a replay, so one run with its attempt unchanged, whether the uid was set or generated.
TEST(TrackerClient, RegistrationDeliveredTwiceIsOneRun) {
  testing::TempDir dir;
  Daemon daemon(dir.path());
  for (const std::string uid : {"persisted-uid-0001", ""}) {
    LossyProxy proxy(daemon.url(), "/api/runs");
    RunInfo info = run_info("twice" + uid);
    info.experiment = "twice-" + std::to_string(uid.empty());
    info.uid = uid;
    info.attempt = 3;
    {
      TrackerClient client(options_for(proxy.url(), dir));
      EXPECT_FALSE(client.start_run(info).has_value());  // the answer never came
      client.log_metric("train/loss", 0, 1.0);
      ASSERT_TRUE(client.flush(60s));
      ASSERT_TRUE(client.run_id().has_value());
    }
    EXPECT_EQ(proxy.lossy_posts(), 2) << "uid '" << uid << "'";  // delivered twice
    const json runs = get(daemon.url(), "/api/runs?experiment=" + info.experiment)["runs"];
    ASSERT_EQ(runs.size(), 1u) << runs.dump();
    EXPECT_EQ(runs[0]["attempt"], 3);
    EXPECT_TRUE(uid.empty() ? runs[0]["uid"].is_string() : runs[0]["uid"] == uid) << runs.dump();
    const auto run = runs[0]["run_id"].get<std::int64_t>();
    EXPECT_EQ(get(daemon.url(), "/api/runs/" + std::to_string(run))["attempts"].size(), 1u);
    EXPECT_EQ(series(daemon.url(), run, "train/loss").size(), 1u);
  }
}

// Issue 16 as the trainer met it: runs/exp1/tiny and runs/exp2/tiny, both named "tiny".
TEST(TrackerClient, SameNameInTwoRunDirectoriesIsTwoRuns) {
  testing::TempDir dir;
  Daemon daemon(dir.path());
  std::vector<std::int64_t> runs;
  for (const double dropout : {0.1, 0.3}) {
    testing::TempDir run_dir;
    TrackerClient client(options_for(daemon.url(), run_dir));
    RunInfo info = run_info("tiny");
    info.params["model.dropout"] = dropout;
    runs.push_back(client.start_run(info).value());
    for (int step = 0; step < 5; ++step) client.log_metric("train/loss", step, dropout);
    ASSERT_TRUE(client.flush(60s));
  }
  ASSERT_NE(runs[0], runs[1]);
  for (int i = 0; i < 2; ++i) {
    const json run = get(daemon.url(), "/api/runs/" + std::to_string(runs[i]));
    EXPECT_EQ(run["attempt"], 1);
    EXPECT_DOUBLE_EQ(run["params"]["model.dropout"].get<double>(), i == 0 ? 0.1 : 0.3);
    const json points = series(daemon.url(), runs[i], "train/loss");
    expect_each_step_once(points, 5);
    EXPECT_DOUBLE_EQ(points[0]["value"].get<double>(), i == 0 ? 0.1 : 0.3);
  }
}

// A preempted job requeued: the same uid with attempt 2 continues the run.
TEST(TrackerClient, NextAttemptResumesTheRunByUid) {
  testing::TempDir dir;
  Daemon daemon(dir.path());
  RunInfo info = run_info("requeued-by-uid");
  info.uid = generate_run_uid();
  EXPECT_TRUE(is_valid_run_uid(*info.uid)) << *info.uid;
  EXPECT_NE(generate_run_uid(), info.uid);
  std::int64_t run = 0;
  for (const int attempt : {1, 2}) {
    info.attempt = attempt;
    info.world_size = attempt * 2;
    TrackerClient client(options_for(daemon.url(), dir));
    const auto id = client.start_run(info);
    ASSERT_TRUE(id.has_value());
    if (attempt == 1) run = *id;
    EXPECT_EQ(*id, run);
    for (int step = 0; step < 10; ++step)
      client.log_metric("train/loss", (attempt - 1) * 10 + step, 1.0);
    if (attempt == 1) client.set_status(RunStatus::kPreempted);
    ASSERT_TRUE(client.flush(60s));
  }
  const json detail = get(daemon.url(), "/api/runs/" + std::to_string(run));
  EXPECT_EQ(detail["attempt"], 2);
  EXPECT_EQ(detail["status"], "running");
  EXPECT_EQ(detail["world_size"], 4);
  ASSERT_EQ(detail["attempts"].size(), 2u);
  EXPECT_EQ(detail["attempts"][0]["status"], "preempted");
  EXPECT_EQ(detail["attempts"][0]["world_size"], 2);
  EXPECT_EQ(detail["attempts"][1]["status"], "running");
  expect_each_step_once(series(daemon.url(), run, "train/loss"), 20);
  EXPECT_STREQ(to_string(RunStatus::kPreempted), "preempted");
  TrackerClient bad(options_for(daemon.url(), dir));
  info.uid = "not a uid";
  EXPECT_THROW(bad.start_run(info), std::invalid_argument);
}

TEST(TrackerReader, ReadsARealDaemonAndNamesItInErrors) {
  testing::TempDir dir;
  TokenDaemon served(dir);
  auto& [token_file, daemon, client] = served;
  const std::int64_t run = start_sample_run(
      client, "reader-run", {"valid", 5, std::nullopt, 25.84, std::nullopt, 4.921, std::nullopt});
  ASSERT_TRUE(client.flush(60s));

  const auto no_env = [](const char*) -> const char* { return nullptr; };
  const DaemonAddress from_flags = find_daemon({"", daemon.port_file(), token_file}, no_env);
  EXPECT_EQ(from_flags.url, daemon.url());
  EXPECT_EQ(from_flags.token, "s3cret");
  const std::string url = daemon.url();
  const std::string& token_path = token_file;  // a lambda captures no structured binding (C++17)
  const auto env = [&](const char* name) -> const char* {
    if (std::string(name) == "NMT_TRACKER_URL") return url.c_str();
    if (std::string(name) == "NMT_TRACKER_TOKEN_FILE") return token_path.c_str();
    return nullptr;
  };
  const DaemonAddress from_env = find_daemon({}, env);
  EXPECT_EQ(from_env.url, daemon.url());
  EXPECT_EQ(from_env.token, "s3cret");
  NMT_EXPECT_THROW_WITH(find_daemon({}, no_env), std::invalid_argument, "NMT_TRACKER_URL");
  NMT_EXPECT_THROW_WITH(find_daemon({"", dir.file("none.port"), ""}, no_env), TrackerUnreachable,
                        "none.port");

  TrackerReader reader(from_env);
  EXPECT_EQ(reader.health().status, "ok");
  const auto named = reader.find_runs_by_name("reader-run");
  ASSERT_EQ(named.size(), 1u);
  EXPECT_EQ(named[0].run_id, run);
  EXPECT_EQ(named[0].attempts, 1);
  const api::RunDetail detail = reader.get_run(run);
  EXPECT_EQ(detail.params.at("model.layers"), api::ParamValue(6.0));
  EXPECT_EQ(detail.metric_keys, std::vector<std::string>{"train/loss"});
  ASSERT_EQ(detail.evals.size(), 1u);
  EXPECT_DOUBLE_EQ(*detail.evals[0].record.bleu, 25.84);
  const api::MetricSeries series = reader.metric_series(run, "train/loss", 2);
  EXPECT_TRUE(series.downsampled);
  EXPECT_EQ(series.total_points, 5);
  ASSERT_TRUE(series.last.has_value());
  EXPECT_EQ(series.last->step, 4);
  api::RunQuery query;
  query.metrics = api::KeySelection{true, {}};
  const auto listed = reader.list_runs(query);
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_DOUBLE_EQ(listed[0].last_metrics->at("train/loss"), 0.5);
  ASSERT_EQ(reader.sweeps().size(), 1u);
  EXPECT_EQ(reader.sweeps()[0].sweep, "abl");
  const api::SweepTable table = reader.sweep_table("abl");
  ASSERT_EQ(table.rows.size(), 1u);
  EXPECT_EQ(table.rows[0].values.at("dev_bleu"), api::ParamValue(25.84));

  EXPECT_EQ(reader.set_status(run, "killed").status, "killed");
  EXPECT_EQ(reader.get_run(run).summary.status, "killed");
  EXPECT_TRUE(reader.delete_run(run).deleted);
  EXPECT_TRUE(reader.find_runs_by_name("reader-run").empty());
  EXPECT_FALSE(reader.restore_run(run).deleted);
  EXPECT_EQ(reader.find_runs_by_name("reader-run").size(), 1u);

  try {
    reader.get_run(999);
    ADD_FAILURE() << "no error for an unknown run";
  } catch (const TrackerError& e) {
    EXPECT_EQ(e.status(), 404);
    EXPECT_NE(std::string(e.what()).find(daemon.url()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("unknown run 999"), std::string::npos) << e.what();
  }
  try {
    api::RunQuery bad;
    bad.metrics = api::KeySelection{false, {""}};
    reader.list_runs(bad);
    ADD_FAILURE() << "no error for an empty metric key";
  } catch (const TrackerError& e) {
    EXPECT_EQ(e.status(), 400);
    EXPECT_EQ(e.field(), "metrics");
  }
  TrackerReader without_token({daemon.url(), ""});
  NMT_EXPECT_THROW_WITH(without_token.list_runs(), TrackerError, "401");
  daemon.stop();
  NMT_EXPECT_THROW_WITH(reader.health(), TrackerUnreachable, url);
}

TEST(TrackerHttpClient, ReconnectsWhenTheDaemonClosedAnIdleConnection) {
  testing::TempDir dir;
  Daemon daemon(dir.path(), 0, {"--read-timeout", "0.2"});
  HttpClient http(parse_url(daemon.url()), "", 5s);
  EXPECT_EQ(http.request("GET", "/api/health").status, 200);
  EXPECT_EQ(http.request("GET", "/api/health").status, 200);  // same connection
  std::this_thread::sleep_for(500ms);                         // the daemon drops it meanwhile
  EXPECT_EQ(http.request("GET", "/api/runs").status, 200);
  EXPECT_EQ(http.request("GET", "/api/nothing").status, 404);
  daemon.stop();
  EXPECT_THROW(http.request("GET", "/api/health"), HttpError);
}

// A client counts against the cap of the address it connects from.
TEST(TrackerHttpClient, ConnectsFromItsLocalAddress) {
  testing::TempDir dir;
  Daemon daemon(dir.path(), 0, {"--max-connections-per-client", "1"});
  const auto from = [&](const std::string& address) {
    auto http = std::make_unique<HttpClient>(parse_url(daemon.url()), "", 5s);
    http->set_local_address(address);
    return http;
  };
  auto node5 = from("127.0.0.5"), again5 = from("127.0.0.5"), node6 = from("127.0.0.6");
  EXPECT_EQ(node5->request("GET", "/api/health").status, 200);  // 127.0.0.5's one connection
  int status = 0;  // no answer: the daemon closed before reading the request
  try {
    status = again5->request("GET", "/api/health").status;
  } catch (const HttpError&) {
  }
  EXPECT_NE(status, 200);
  EXPECT_EQ(node6->request("GET", "/api/health").status, 200);
  NMT_EXPECT_THROW_WITH(node6->set_local_address("node12"), std::invalid_argument, "node12");
  auto elsewhere = from("192.0.2.1");  // TEST-NET-1: not an address of this host
  EXPECT_THROW(elsewhere->request("GET", "/api/health"), HttpError);
}

TEST(TrackerHttpClient, ParsesTrackerUrls) {
  EXPECT_EQ(parse_url("http://127.0.0.1:6006").port, "6006");
  EXPECT_EQ(parse_url("http://node12:80/").host, "node12");
  EXPECT_EQ(parse_url("localhost:9").to_string(), "http://localhost:9");
  EXPECT_FALSE(parse_url("localhost:9").tls());
  EXPECT_EQ(parse_url("http://[::1]:7").host, "::1");
  EXPECT_EQ(parse_url("http://[::1]:7").to_string(), "http://[::1]:7");
  EXPECT_EQ(parse_url("http://host").port, "80");
  const Url https = parse_url("https://login1.cluster:6006/");
  EXPECT_TRUE(https.tls());
  EXPECT_EQ(https.host, "login1.cluster");
  EXPECT_EQ(https.to_string(), "https://login1.cluster:6006");
  EXPECT_EQ(parse_url("HTTPS://h").port, "443");
  EXPECT_EQ(parse_url("HTTPS://h").scheme, "https");
  NMT_EXPECT_THROW_WITH(parse_url("ftp://h:1"), std::invalid_argument, "http or https");
  NMT_EXPECT_THROW_WITH(parse_url("http://h:99999"), std::invalid_argument, "port");
  NMT_EXPECT_THROW_WITH(parse_url("https://h:1/api"), std::invalid_argument, "https://host:port");
}

// A fake environment for the resolver.
GetEnv environment(std::map<std::string, std::string> variables) {
  auto values = std::make_shared<std::map<std::string, std::string>>(std::move(variables));
  return [values](const char* name) -> const char* {
    const auto it = values->find(name);
    return it == values->end() ? nullptr : it->second.c_str();
  };
}

std::vector<DaemonSource> flags_and_config(const DaemonSettings& flags,
                                           const DaemonSettings& config) {
  return {{flags, kTrainerFlagNames}, {config, kConfigNames}};
}

TEST(TrackerDaemonAddress, FlagBeatsConfigBeatsEnvironmentForEachSetting) {
  testing::TempDir dir;
  for (const char* name : {"flag", "config", "env"}) {
    testing::write_text(dir.file(std::string(name) + ".token"), std::string(name) + "-token\n");
    testing::write_text(dir.file(std::string(name) + ".pem"), "a CA file\n");
  }
  testing::write_text(dir.file("port"), " 4321\n");
  const auto env = environment({{"NMT_TRACKER_URL", "https://env:3"},
                                {"NMT_TRACKER_TOKEN_FILE", dir.file("env.token")},
                                {"NMT_TRACKER_CA_FILE", dir.file("env.pem")}});
  const DaemonSettings flags{"https://flag:1", "", dir.file("flag.token"), dir.file("flag.pem")};
  const DaemonSettings config{"https://config:2", "", dir.file("config.token"),
                              dir.file("config.pem")};
  auto all = resolve_daemon(flags_and_config(flags, config), env).value();
  EXPECT_EQ(all.url, "https://flag:1");
  EXPECT_EQ(all.url_from, "--tracker-url");
  EXPECT_EQ(all.token, "flag-token");
  EXPECT_EQ(all.ca_file, dir.file("flag.pem"));
  auto from_config = resolve_daemon(flags_and_config({}, config), env).value();
  EXPECT_EQ(from_config.url, "https://config:2");
  EXPECT_EQ(from_config.url_from, "tracker.url");
  EXPECT_EQ(from_config.token, "config-token");
  EXPECT_EQ(from_config.ca_file, dir.file("config.pem"));
  auto from_env = resolve_daemon(flags_and_config({}, {}), env).value();
  EXPECT_EQ(from_env.url, "https://env:3");
  EXPECT_EQ(from_env.url_from, "NMT_TRACKER_URL");
  EXPECT_EQ(from_env.token, "env-token");
  EXPECT_EQ(from_env.ca_file, dir.file("env.pem"));
  // Each setting on its own: the URL of the config, the token of the environment.
  auto mixed = resolve_daemon(flags_and_config({"", "", "", dir.file("flag.pem")},
                                               {"https://config:2", "", "", ""}),
                              env)
                   .value();
  EXPECT_EQ(mixed.url, "https://config:2");
  EXPECT_EQ(mixed.token, "env-token");
  EXPECT_EQ(mixed.ca_file, dir.file("flag.pem"));
  // A flag's port file beats the config's URL; within one place the URL beats the port file.
  auto by_port = resolve_daemon(flags_and_config({"", dir.file("port"), "", ""}, config), env);
  EXPECT_EQ(by_port->url, "http://127.0.0.1:4321");
  EXPECT_EQ(by_port->url_from, "--tracker-port-file");
  EXPECT_TRUE(by_port->ca_file.empty());  // http: no CA file
  auto url_first =
      resolve_daemon(flags_and_config({"http://a:5", dir.file("port"), "", ""}, {}), env);
  EXPECT_EQ(url_first->url, "http://a:5");
  // Nothing anywhere: no daemon, and the tools' form says where to give one.
  EXPECT_FALSE(resolve_daemon(flags_and_config({}, {}), environment({})).has_value());
  EXPECT_FALSE(names_daemon(flags_and_config({}, {}), environment({})));
  EXPECT_TRUE(names_daemon(flags_and_config({}, {}), env));
  NMT_EXPECT_THROW_WITH(find_daemon({}, environment({})), std::invalid_argument, "NMT_TRACKER_URL",
                        "--url");
}

TEST(TrackerDaemonAddress, TrimsEveryValueTheSameWay) {
  testing::TempDir dir;
  testing::write_text(dir.file("token"), "  \t s3cret \r\n\n");
  testing::write_text(dir.file("ca.pem"), "a CA file\n");
  const auto env = environment({{"NMT_TRACKER_URL", "  http://env:3 \n"},
                                {"NMT_TRACKER_TOKEN_FILE", " " + dir.file("token") + "\n"}});
  // Blank flags and config values count as not given.
  const auto address =
      resolve_daemon(flags_and_config({"  ", " \t", "  ", ""}, {"", "\n", " ", " "}), env).value();
  EXPECT_EQ(address.url, "http://env:3");
  EXPECT_EQ(address.token, "s3cret");
  const auto https =
      resolve_daemon(
          flags_and_config({" https://h:9/ ", "", "", "  " + dir.file("ca.pem") + " \n"}, {}),
          environment({}))
          .value();
  EXPECT_EQ(https.url, "https://h:9");
  EXPECT_EQ(https.ca_file, dir.file("ca.pem"));
  // The daemon trims its own token file the same way: this client's token is accepted.
  Daemon daemon(dir.path(), 0, {"--token-file", dir.file("token")});
  auto with_token = resolve_daemon(flags_and_config({daemon.url() + "\n", "", "", ""}, {}), env);
  TrackerReader reader(*with_token);
  EXPECT_TRUE(reader.list_runs().empty());
}

TEST(TrackerDaemonAddress, ErrorsNameTheFileAndWhatNamedIt) {
  testing::TempDir dir;
  testing::write_text(dir.file("blank.token"), " \n");
  testing::write_text(dir.file("bad.port"), "http\n");
  const auto none = environment({});
  NMT_EXPECT_THROW_WITH(
      resolve_daemon(flags_and_config({}, {"http://h:1", "", dir.file("missing.token"), ""}),
                     environment({{"NMT_TRACKER_TOKEN_FILE", dir.file("env.token")}})),
      std::runtime_error, "missing.token", "named by tracker.token_file");
  NMT_EXPECT_THROW_WITH(
      resolve_daemon(flags_and_config({}, {}),
                     environment({{"NMT_TRACKER_URL", "http://h:1"},
                                  {"NMT_TRACKER_TOKEN_FILE", dir.file("env.token")}})),
      std::runtime_error, "env.token", "named by NMT_TRACKER_TOKEN_FILE");
  NMT_EXPECT_THROW_WITH(
      resolve_daemon(flags_and_config({"http://h:1", "", dir.file("blank.token"), ""}, {}), none),
      std::runtime_error, "blank.token", "--tracker-token-file", "empty");
  NMT_EXPECT_THROW_WITH(
      resolve_daemon(flags_and_config({}, {}), environment({{"NMT_TRACKER_URL", "http://h:0"}})),
      std::invalid_argument, "NMT_TRACKER_URL", "http://h:0");
  NMT_EXPECT_THROW_WITH(resolve_daemon(flags_and_config({}, {"ftp://h", "", "", ""}), none),
                        std::invalid_argument, "tracker.url", "http or https");
  NMT_EXPECT_THROW_WITH(
      resolve_daemon(flags_and_config({"", dir.file("gone.port"), "", ""}, {}), none),
      TrackerUnreachable, "gone.port", "--tracker-port-file", "is nmt-trackerd running?");
  NMT_EXPECT_THROW_WITH(
      resolve_daemon(flags_and_config({}, {"", dir.file("bad.port"), "", ""}), none),
      std::invalid_argument, "bad.port", "tracker.port_file", "not a port");
  NMT_EXPECT_THROW_WITH(
      resolve_daemon(flags_and_config({"https://h:1", "", "", ""}, {}),
                     environment({{"NMT_TRACKER_CA_FILE", dir.file("no-ca.pem")}})),
      std::runtime_error, "no-ca.pem", "named by NMT_TRACKER_CA_FILE");
  // An http URL never uses a CA file, so a missing one is no error there.
  EXPECT_NO_THROW(resolve_daemon(flags_and_config({"http://h:1", "", "", ""}, {}),
                                 environment({{"NMT_TRACKER_CA_FILE", dir.file("no-ca.pem")}})));
  // The tools' flags are named as the tools spell them.
  NMT_EXPECT_THROW_WITH(find_daemon({"", dir.file("gone.port"), "", ""}, none), TrackerUnreachable,
                        "named by --port-file");
}

TEST(TrackerSpool, SkipsATornLastLineAndAppendsOnACleanLine) {
  testing::TempDir dir;
  const std::string path = dir.file("spool.jsonl");
  const SpoolEntry metrics{"metrics", 3, R"({"rank":0,"sequence":41,"points":[{}, {}]})", 2, 41};
  const SpoolEntry status{"status", std::nullopt, R"({"status":"finished"})", 0, std::nullopt};
  testing::write_text(path, encode_spool_entry(metrics) + "\n" + encode_spool_entry(status) + "\n" +
                                R"({"kind":"metrics","run_id":3,"bo)");
  {
    Spool spool(path);
    ASSERT_EQ(spool.entries().size(), 2u);
    EXPECT_EQ(spool.points(), 2u);
    EXPECT_EQ(spool.max_sequence(), 41);
    EXPECT_FALSE(spool.entries()[1].run_id.has_value());
    spool.append({metrics});
  }
  Spool reloaded(path);
  ASSERT_EQ(reloaded.entries().size(), 3u);
  reloaded.drop_front(2);
  EXPECT_EQ(Spool(path).entries().size(), 1u);
  reloaded.drop_front(1);
  EXPECT_EQ(fs::file_size(path), 0u);
}

}  // namespace
}  // namespace nmt::tracker
