// The tracker's request handler over a real SQLite file: every route of tracker/API.md, the
// promises behind them (idempotent batches, runs never merged by name, resume by uid and attempt,
// replayed registrations, downsampling, the ablation table), and the
// error contract (400 naming the field, 401, 404, 405, 500), without sockets.

#include "tracker/server/request_handler.h"

#include <fmt/format.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>
#include <tuple>

#include "test_utils.h"
#include "tracker/store/schema.h"

namespace nmt::tracker {
namespace {

using nlohmann::json;

struct Answer {
  int status = 0;
  json body;
};

class TrackerHandler : public ::testing::Test {
 protected:
  TrackerHandler() { open(""); }

  void open(const std::string& token, const HandlerOptions& options = {}) {
    handler_.reset();
    store_.reset();
    db_.reset();
    db_ = std::make_unique<Database>(path_);
    store_ = std::make_unique<RunStore>(*db_);
    handler_ = std::make_unique<RequestHandler>(*store_, token, options);
  }

  Answer call(const std::string& method, const std::string& path, const std::string& body = "",
              const std::map<std::string, std::string>& query = {},
              const std::string& authorization = "") {
    const Response response =
        handler_->handle(Request{method, path, query, authorization, body, ""});
    EXPECT_EQ(response.content_type, "application/json");
    return Answer{response.status, json::parse(response.body)};
  }
  Answer post(const std::string& path, const json& body) { return call("POST", path, body.dump()); }
  Answer get(const std::string& path, const std::map<std::string, std::string>& query = {}) {
    return call("GET", path, "", query);
  }

  std::int64_t create_run(const json& body) {
    const Answer answer = post("/api/runs", body);
    EXPECT_EQ(answer.status, 200) << answer.body.dump();
    return answer.body.at("run_id").get<std::int64_t>();
  }
  static std::string run_path(std::int64_t id, const std::string& action = "") {
    return "/api/runs/" + std::to_string(id) + (action.empty() ? "" : "/" + action);
  }
  static json batch(std::int64_t rank, std::int64_t sequence, int first_step, int count) {
    json points = json::array();
    for (int step = first_step; step < first_step + count; ++step) {
      points.push_back({{"key", "loss"}, {"step", step}, {"value", 10.0 / step}});
    }
    return {{"rank", rank}, {"sequence", sequence}, {"points", points}};
  }
  std::vector<std::int64_t> ids(const std::map<std::string, std::string>& query) {
    const Answer answer = get("/api/runs", query);
    EXPECT_EQ(answer.status, 200) << answer.body.dump();
    std::vector<std::int64_t> result;
    for (const json& run : answer.body.at("runs")) {
      result.push_back(run.at("run_id").get<std::int64_t>());
    }
    return result;
  }

  testing::TempDir dir_;
  std::string path_ = dir_.file("tracker.db");
  std::unique_ptr<Database> db_;
  std::unique_ptr<RunStore> store_;
  std::unique_ptr<RequestHandler> handler_;
};

TEST_F(TrackerHandler, HealthReportsSchemaVersion) {
  const Answer answer = get("/api/health");
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body.at("status"), "ok");
  EXPECT_EQ(answer.body.at("schema_version"), latest_schema_version());
}

// Issue 16: runs/exp1/tiny and runs/exp2/tiny, both named "tiny", became one run. A name is only
// a label now: without a uid, or with different uids, every registration is a run of its own.
TEST_F(TrackerHandler, SameNameIsNeverMerged) {
  const json first = {{"experiment", "e"}, {"name", "tiny"}, {"params", {{"model.dropout", 0.1}}}};
  json second = first;
  second["params"]["model.dropout"] = 0.3;
  const auto a = create_run(first);
  const auto b = create_run(second);
  json third = first;
  third["uid"] = "uid-third-0001";
  json fourth = first;
  fourth["uid"] = "uid-fourth-0001";
  const Answer c = post("/api/runs", third);
  const Answer d = post("/api/runs", fourth);
  ASSERT_EQ(c.status, 200) << c.body.dump();
  ASSERT_EQ(d.status, 200) << d.body.dump();
  EXPECT_EQ(c.body.at("resumed"), false);
  EXPECT_EQ(d.body.at("attempt"), 1);
  const std::set<json> distinct = {a, b, c.body.at("run_id"), d.body.at("run_id")};
  EXPECT_EQ(distinct.size(), 4u);

  // The same sequence number in both: each run stores its own batch.
  ASSERT_EQ(post(run_path(a, "metrics"), batch(0, 0, 1, 3)).body.at("stored"), 3);
  ASSERT_EQ(post(run_path(b, "metrics"), batch(0, 0, 1, 5)).body.at("stored"), 5);
  EXPECT_EQ(get(run_path(a, "metrics"), {{"key", "loss"}}).body.at("points").size(), 3u);
  EXPECT_EQ(get(run_path(b, "metrics"), {{"key", "loss"}}).body.at("points").size(), 5u);
  const json run_a = get(run_path(a)).body, run_b = get(run_path(b)).body;
  EXPECT_DOUBLE_EQ(run_a.at("params").at("model.dropout").get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(run_b.at("params").at("model.dropout").get<double>(), 0.3);
  EXPECT_EQ(run_a.at("attempt"), 1);
  EXPECT_EQ(run_b.at("attempt"), 1);
  EXPECT_TRUE(run_a.at("uid").is_null());
  EXPECT_EQ(run_a.at("attempts").size(), 1u);
  EXPECT_EQ(ids({{"experiment", "e"}}).size(), 4u);
}

TEST_F(TrackerHandler, UidWithHigherAttemptResumesTheRun) {
  const json spec = {{"experiment", "wmt14"},
                     {"name", "base"},
                     {"uid", "3f2a9c0e5b7d4e61"},
                     {"host", "node1"},
                     {"world_size", 1},
                     {"slurm_job_id", "100"},
                     {"params", {{"model.d_model", 512}, {"model.positions", "sinusoid"}}}};
  const Answer first = post("/api/runs", spec);
  ASSERT_EQ(first.status, 200) << first.body.dump();
  EXPECT_EQ(first.body.at("attempt"), 1);
  EXPECT_EQ(first.body.at("resumed"), false);
  const auto id = first.body.at("run_id").get<std::int64_t>();
  ASSERT_EQ(call("PUT", run_path(id, "status"), R"({"status": "preempted"})").status, 200);

  json again = spec;
  again["attempt"] = 2;
  again["world_size"] = 4;
  again["slurm_job_id"] = "101";
  again["params"] = {{"model.d_model", 1024}};
  again.erase("host");
  const Answer second = post("/api/runs", again);
  ASSERT_EQ(second.status, 200) << second.body.dump();
  EXPECT_EQ(second.body.at("run_id"), id);
  EXPECT_EQ(second.body.at("attempt"), 2);
  EXPECT_EQ(second.body.at("resumed"), true);
  const json run = get(run_path(id)).body;
  EXPECT_EQ(run.at("uid"), "3f2a9c0e5b7d4e61");
  EXPECT_EQ(run.at("attempt"), 2);
  EXPECT_EQ(run.at("status"), "running");
  EXPECT_TRUE(run.at("ended_at").is_null());
  EXPECT_EQ(run.at("world_size"), 4);
  EXPECT_EQ(run.at("host"), "node1");  // not sent on resume: kept
  EXPECT_EQ(run.at("params").at("model.d_model"), 1024);
  EXPECT_EQ(run.at("params").at("model.positions"), "sinusoid");
  const json& attempts = run.at("attempts");
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0].at("attempt"), 1);
  EXPECT_EQ(attempts[0].at("status"), "preempted");
  EXPECT_FALSE(attempts[0].at("ended_at").is_null());
  EXPECT_EQ(attempts[0].at("world_size"), 1);
  EXPECT_EQ(attempts[0].at("slurm_job_id"), "100");
  EXPECT_EQ(attempts[1].at("attempt"), 2);
  EXPECT_EQ(attempts[1].at("status"), "running");
  EXPECT_TRUE(attempts[1].at("ended_at").is_null());
  EXPECT_EQ(attempts[1].at("world_size"), 4);
  EXPECT_TRUE(attempts[1].at("host").is_null());
  EXPECT_GE(attempts[1].at("started_at").get<double>(), attempts[0].at("ended_at").get<double>());

  // A late report from attempt 1 ends attempt 1 only; the run goes on as attempt 2.
  ASSERT_EQ(call("PUT", run_path(id, "status"), R"({"status": "killed", "attempt": 1})").status,
            200);
  ASSERT_EQ(call("PUT", run_path(id, "status"), R"({"status": "finished"})").status, 200);
  const json done = get(run_path(id)).body;
  EXPECT_EQ(done.at("status"), "finished");
  EXPECT_EQ(done.at("attempts")[0].at("status"), "killed");
  EXPECT_EQ(done.at("attempts")[1].at("status"), "finished");
  EXPECT_FALSE(done.at("attempts")[1].at("ended_at").is_null());
  EXPECT_EQ(call("PUT", run_path(id, "status"), R"({"status": "failed", "attempt": 3})").status,
            404);
  EXPECT_EQ(ids({{"uid", "3f2a9c0e5b7d4e61"}}), std::vector<std::int64_t>{id});
  EXPECT_TRUE(ids({{"uid", "0000000000000000"}}).empty());
  EXPECT_EQ(get("/api/runs").body.at("runs")[0].at("uid"), "3f2a9c0e5b7d4e61");
}

// A spool retrying a registration whose answer was lost sends it again: same uid, same attempt.
TEST_F(TrackerHandler, ReplayedRegistrationChangesNothing) {
  const json spec = {{"experiment", "e"}, {"name", "r"},     {"uid", "replayed_uid_1"},
                     {"attempt", 2},      {"host", "node1"}, {"params", {{"model.layers", 6}}}};
  const Answer first = post("/api/runs", spec);
  ASSERT_EQ(first.status, 200) << first.body.dump();
  const auto id = first.body.at("run_id").get<std::int64_t>();
  EXPECT_EQ(first.body.at("attempt"), 2);  // a run first seen at attempt 2 starts there
  ASSERT_EQ(call("PUT", run_path(id, "status"), R"({"status": "finished"})").status, 200);
  const json before = get(run_path(id)).body;

  json replay = spec;
  replay["host"] = "node9";
  replay["params"] = {{"model.layers", 12}};
  for (const int attempt : {2, 1}) {  // the same attempt, and a stale older one
    replay["attempt"] = attempt;
    const Answer answer = post("/api/runs", replay);
    ASSERT_EQ(answer.status, 200) << answer.body.dump();
    EXPECT_EQ(answer.body.at("run_id"), id);
    EXPECT_EQ(answer.body.at("attempt"), 2);
    EXPECT_EQ(answer.body.at("resumed"), false);
  }
  EXPECT_EQ(get(run_path(id)).body, before);  // status, host, params, attempts: all unchanged
  EXPECT_EQ(ids({}), std::vector<std::int64_t>{id});

  // The uid names one run of one experiment: a copied run directory is refused, not merged.
  json copied = spec;
  copied["name"] = "r-copy";
  copied["attempt"] = 3;
  const Answer conflict = post("/api/runs", copied);
  EXPECT_EQ(conflict.status, 409);
  EXPECT_EQ(conflict.body.at("field"), "uid");
  copied["name"] = "r";
  copied["experiment"] = "other";
  EXPECT_EQ(post("/api/runs", copied).status, 409);
  EXPECT_EQ(get(run_path(id)).body, before);
}

TEST_F(TrackerHandler, BadUidOrAttemptIs400NamingTheField) {
  const auto field_of = [&](const json& extra) {
    json body = {{"experiment", "e"}, {"name", "r"}};
    body.update(extra);
    const Answer answer = post("/api/runs", body);
    EXPECT_EQ(answer.status, 400) << body.dump();
    return answer.body.value("field", "");
  };
  EXPECT_EQ(field_of({{"uid", "short"}}), "uid");
  EXPECT_EQ(field_of({{"uid", std::string(65, 'a')}}), "uid");
  EXPECT_EQ(field_of({{"uid", "has/slash1"}}), "uid");
  EXPECT_EQ(field_of({{"uid", "with space"}}), "uid");
  EXPECT_EQ(field_of({{"uid", 12345678}}), "uid");
  EXPECT_EQ(field_of({{"uid", ""}}), "uid");
  EXPECT_EQ(field_of({{"attempt", 0}}), "attempt");
  EXPECT_EQ(field_of({{"attempt", -1}}), "attempt");
  EXPECT_EQ(field_of({{"attempt", "2"}}), "attempt");
  EXPECT_EQ(field_of({{"attempt", 1.5}}), "attempt");
  EXPECT_TRUE(ids({}).empty());  // nothing was created
  // The bounds themselves are valid.
  EXPECT_EQ(post("/api/runs", {{"experiment", "e"}, {"name", "r"}, {"uid", "Ab3_-xyz"}}).status,
            200);
  EXPECT_EQ(
      post("/api/runs", {{"experiment", "e"}, {"name", "r"}, {"uid", std::string(64, 'Z')}}).status,
      200);
  const auto id = create_run({{"experiment", "e"}, {"name", "s"}});
  const Answer status = call("PUT", run_path(id, "status"), R"({"status": "done"})");
  EXPECT_EQ(status.body.at("field"), "status");
  EXPECT_NE(status.body.at("error").get<std::string>().find("preempted"), std::string::npos);
  EXPECT_EQ(call("PUT", run_path(id, "status"), R"({"status": "killed", "attempt": 0})")
                .body.value("field", ""),
            "attempt");
}

TEST_F(TrackerHandler, PreemptedIsATerminalStatus) {
  const auto id = create_run({{"experiment", "e"}, {"name", "r"}});
  const Answer answer = call("PUT", run_path(id, "status"), R"({"status": "preempted"})");
  ASSERT_EQ(answer.status, 200) << answer.body.dump();
  EXPECT_EQ(answer.body.at("status"), "preempted");
  const json run = get(run_path(id)).body;
  EXPECT_EQ(run.at("status"), "preempted");
  EXPECT_FALSE(run.at("ended_at").is_null());
  EXPECT_EQ(run.at("attempts")[0].at("status"), "preempted");
  EXPECT_EQ(ids({{"status", "preempted"}}), std::vector<std::int64_t>{id});
  ASSERT_EQ(call("PUT", run_path(id, "status"), R"({"status": "running"})").status, 200);
  EXPECT_TRUE(get(run_path(id)).body.at("ended_at").is_null());
}

TEST_F(TrackerHandler, IngestedMetricsComeBackAsSeries) {
  const auto id = create_run({{"experiment", "e"}, {"name", "r"}});
  const Answer stored = post(run_path(id, "metrics"), batch(0, 0, 1, 10));
  ASSERT_EQ(stored.status, 200) << stored.body.dump();
  EXPECT_EQ(stored.body.at("stored"), 10);
  EXPECT_EQ(stored.body.at("duplicate"), false);
  ASSERT_EQ(post(run_path(id, "metrics"), batch(1, 0, 11, 3)).status, 200);

  const Answer all = get(run_path(id, "metrics"), {{"key", "loss"}});
  ASSERT_EQ(all.status, 200);
  EXPECT_EQ(all.body.at("key"), "loss");
  EXPECT_EQ(all.body.at("points").size(), 13u);
  const Answer rank0 = get(run_path(id, "metrics"), {{"key", "loss"}, {"rank", "0"}});
  const json& points = rank0.body.at("points");
  ASSERT_EQ(points.size(), 10u);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(points[i].at("step"), i + 1);
    EXPECT_DOUBLE_EQ(points[i].at("value").get<double>(), 10.0 / (i + 1));
    EXPECT_EQ(points[i].at("min"), points[i].at("value"));
    EXPECT_EQ(points[i].at("rank"), 0);
  }
  EXPECT_EQ(get(run_path(id)).body.at("metric_keys"), json::array({"loss"}));
}

TEST_F(TrackerHandler, RetriedBatchIsNotStoredTwice) {
  const auto id = create_run({{"experiment", "e"}, {"name", "r"}});
  ASSERT_EQ(post(run_path(id, "metrics"), batch(0, 7, 1, 5)).body.at("stored"), 5);
  const Answer retry = post(run_path(id, "metrics"), batch(0, 7, 1, 5));
  EXPECT_EQ(retry.status, 200);
  EXPECT_EQ(retry.body.at("stored"), 0);
  EXPECT_EQ(retry.body.at("duplicate"), true);
  EXPECT_EQ(get(run_path(id, "metrics"), {{"key", "loss"}}).body.at("points").size(), 5u);
  // The same sequence from another rank is another batch.
  EXPECT_EQ(post(run_path(id, "metrics"), batch(1, 7, 6, 5)).body.at("duplicate"), false);
  EXPECT_EQ(get(run_path(id, "metrics"), {{"key", "loss"}}).body.at("points").size(), 10u);
}

TEST_F(TrackerHandler, DownsamplingKeepsMinMaxWithinMaxPoints) {
  const auto id = create_run({{"experiment", "e"}, {"name", "r"}});
  json points = json::array();
  for (int step = 1; step <= 1000; ++step) {
    const double value = step == 500 ? 100.0 : step == 777 ? -5.0 : 1.0;
    points.push_back({{"key", "loss"}, {"step", step}, {"value", value}});
  }
  ASSERT_EQ(
      post(run_path(id, "metrics"), {{"rank", 0}, {"sequence", 0}, {"points", points}}).status,
      200);
  const Answer answer = get(run_path(id, "metrics"), {{"key", "loss"}, {"max_points", "64"}});
  ASSERT_EQ(answer.status, 200) << answer.body.dump();
  const json& series = answer.body.at("points");
  EXPECT_LE(series.size(), 64u);
  EXPECT_GE(series.size(), 32u);
  double highest = 0, lowest = 0;
  std::int64_t previous_step = 0;
  for (const json& point : series) {
    const double value = point.at("value").get<double>();
    EXPECT_LE(point.at("min").get<double>(), value);
    EXPECT_GE(point.at("max").get<double>(), value);
    EXPECT_GT(point.at("step").get<std::int64_t>(), previous_step);
    previous_step = point.at("step").get<std::int64_t>();
    highest = std::max(highest, point.at("max").get<double>());
    lowest = std::min(lowest, point.at("min").get<double>());
  }
  EXPECT_EQ(series.front().at("step"), 1);
  EXPECT_DOUBLE_EQ(highest, 100.0);
  EXPECT_DOUBLE_EQ(lowest, -5.0);
}

TEST_F(TrackerHandler, EvalsAndArtifactsAppearInRun) {
  const auto id = create_run({{"experiment", "e"},
                              {"name", "r"},
                              {"params", {{"train.fp16", true}, {"model.dropout", 0.1}}}});
  const Answer eval =
      post(run_path(id, "evals"),
           {{"split", "test"}, {"step", 100000}, {"bleu", 27.3}, {"signature", "nrefs:1|tok:13a"}});
  ASSERT_EQ(eval.status, 200) << eval.body.dump();
  const Answer artifact =
      post(run_path(id, "artifacts"),
           {{"kind", "averaged"}, {"path", "/ckpt/avg.pt"}, {"averaged_from", 5}});
  ASSERT_EQ(artifact.status, 200) << artifact.body.dump();

  const json run = get(run_path(id)).body;
  ASSERT_EQ(run.at("evals").size(), 1u);
  EXPECT_EQ(run.at("evals")[0].at("eval_id"), eval.body.at("eval_id"));
  EXPECT_EQ(run.at("evals")[0].at("split"), "test");
  EXPECT_DOUBLE_EQ(run.at("evals")[0].at("bleu").get<double>(), 27.3);
  EXPECT_TRUE(run.at("evals")[0].at("perplexity").is_null());
  EXPECT_EQ(run.at("evals")[0].at("signature"), "nrefs:1|tok:13a");
  ASSERT_EQ(run.at("artifacts").size(), 1u);
  EXPECT_EQ(run.at("artifacts")[0].at("artifact_id"), artifact.body.at("artifact_id"));
  EXPECT_EQ(run.at("artifacts")[0].at("path"), "/ckpt/avg.pt");
  EXPECT_EQ(run.at("artifacts")[0].at("averaged_from"), 5);
  // Bools read back as true/false, not 1/0; a filter by either finds them.
  EXPECT_EQ(run.at("params").at("train.fp16"), "true");
  EXPECT_EQ(ids({{"param.train.fp16", "true"}}), (std::vector<std::int64_t>{id}));
  EXPECT_EQ(ids({{"param.train.fp16", "1"}}), (std::vector<std::int64_t>{id}));
  EXPECT_TRUE(ids({{"param.train.fp16", "false"}}).empty());
  EXPECT_DOUBLE_EQ(run.at("params").at("model.dropout").get<double>(), 0.1);
  EXPECT_EQ(run.at("experiment"), "e");
}

TEST_F(TrackerHandler, ListFiltersAreAnded) {
  const auto a = create_run({{"experiment", "wmt14"},
                             {"name", "a"},
                             {"sweep", "A"},
                             {"params", {{"model.d_model", 256}, {"model.positions", "learned"}}}});
  const auto b = create_run({{"experiment", "wmt14"},
                             {"name", "b"},
                             {"sweep", "A"},
                             {"params", {{"model.d_model", 512}}}});
  const auto c = create_run({{"experiment", "iwslt"},
                             {"name", "c"},
                             {"sweep", "B"},
                             {"params", {{"model.d_model", 256}}}});
  ASSERT_EQ(call("PUT", run_path(b, "status"), R"({"status": "finished"})").status, 200);

  EXPECT_EQ(ids({}), (std::vector<std::int64_t>{a, b, c}));
  EXPECT_EQ(ids({{"experiment", "wmt14"}}), (std::vector<std::int64_t>{a, b}));
  EXPECT_EQ(ids({{"sweep", "B"}}), (std::vector<std::int64_t>{c}));
  EXPECT_EQ(ids({{"status", "finished"}}), (std::vector<std::int64_t>{b}));
  EXPECT_EQ(ids({{"param.model.d_model", "256"}}), (std::vector<std::int64_t>{a, c}));
  EXPECT_EQ(ids({{"param.model.d_model", "256.0"}}), (std::vector<std::int64_t>{a, c}));
  EXPECT_EQ(ids({{"param.model.d_model", "256"}, {"experiment", "wmt14"}}),
            (std::vector<std::int64_t>{a}));
  EXPECT_EQ(ids({{"param.model.positions", "learned"}}), (std::vector<std::int64_t>{a}));
  EXPECT_TRUE(ids({{"experiment", "nope"}}).empty());
  const Answer typo = get("/api/runs", {{"experment", "wmt14"}});
  EXPECT_EQ(typo.status, 400);
  EXPECT_EQ(typo.body.at("field"), "experment");
}

TEST_F(TrackerHandler, MalformedJsonIs400NamingTheField) {
  const auto id = create_run({{"experiment", "e"}, {"name", "r"}});
  const Answer broken = call("POST", run_path(id, "metrics"), R"({"rank": 0, "sequence": )");
  EXPECT_EQ(broken.status, 400);
  EXPECT_EQ(broken.body.at("field"), "body");
  EXPECT_EQ(call("POST", "/api/runs", "[1, 2]").body.at("field"), "body");

  json bad = batch(0, 0, 1, 5);
  bad["points"][3]["value"] = "nan";
  const Answer answer = post(run_path(id, "metrics"), bad);
  EXPECT_EQ(answer.status, 400);
  EXPECT_EQ(answer.body.at("field"), "points[3].value");
  EXPECT_EQ(answer.body.at("error"), "field 'points[3].value' must be a number");
  EXPECT_TRUE(get(run_path(id, "metrics"), {{"key", "loss"}}).body.at("points").empty());
  // The rejected batch did not consume its sequence number.
  EXPECT_EQ(post(run_path(id, "metrics"), batch(0, 0, 1, 5)).body.at("stored"), 5);
}

TEST_F(TrackerHandler, MissingOrWrongTypedFieldsAreNamed) {
  const auto id = create_run({{"experiment", "e"}, {"name", "r"}});
  const auto field_of = [&](const std::string& method, const std::string& path,
                            const std::string& body,
                            const std::map<std::string, std::string>& query = {}) {
    const Answer answer = call(method, path, body, query);
    EXPECT_EQ(answer.status, 400) << path << " " << body;
    return answer.body.value("field", "");
  };
  EXPECT_EQ(field_of("POST", "/api/runs", R"({"experiment": "e"})"), "name");
  EXPECT_EQ(field_of("POST", "/api/runs", R"({"experiment": 5, "name": "r"})"), "experiment");
  EXPECT_EQ(field_of("POST", "/api/runs", R"({"experiment": "e", "name": ""})"), "name");
  EXPECT_EQ(field_of("POST", "/api/runs", R"({"experiment": "e", "name": "r", "row_index": "1"})"),
            "row_index");
  EXPECT_EQ(
      field_of("POST", "/api/runs", R"({"experiment": "e", "name": "r", "params": {"x": [1]}})"),
      "params.x");
  EXPECT_EQ(field_of("PUT", run_path(id, "status"), R"({"status": "paused"})"), "status");
  EXPECT_EQ(field_of("POST", run_path(id, "metrics"), R"({"sequence": 0, "points": []})"), "rank");
  EXPECT_EQ(
      field_of("POST", run_path(id, "metrics"), R"({"rank": 0, "sequence": 1.5, "points": []})"),
      "sequence");
  EXPECT_EQ(
      field_of("POST", run_path(id, "metrics"), R"({"rank": 0, "sequence": 1, "points": {}})"),
      "points");
  EXPECT_EQ(field_of("POST", run_path(id, "metrics"),
                     R"({"rank": 0, "sequence": 1, "points": [{"key": "loss", "value": 1}]})"),
            "points[0].step");
  EXPECT_EQ(field_of("POST", run_path(id, "evals"), R"({"bleu": 27})"), "split");
  EXPECT_EQ(field_of("POST", run_path(id, "evals"), R"({"split": "test", "bleu": "27"})"), "bleu");
  EXPECT_EQ(
      field_of("POST", run_path(id, "artifacts"), R"({"kind": "ckpt", "path": "p", "step": "x"})"),
      "step");
  EXPECT_EQ(field_of("GET", run_path(id, "metrics"), "", {}), "key");
  EXPECT_EQ(field_of("GET", run_path(id, "metrics"), "", {{"key", "loss"}, {"max_points", "abc"}}),
            "max_points");
  EXPECT_EQ(field_of("GET", run_path(id, "metrics"), "", {{"key", "loss"}, {"max_points", "0"}}),
            "max_points");
}

TEST_F(TrackerHandler, UnknownRoutesAndRunsAre404) {
  EXPECT_EQ(get("/api/nope").status, 404);
  EXPECT_EQ(get("/api/runs/1/nope").status, 404);
  EXPECT_EQ(get("/api/runs/999").status, 404);
  EXPECT_EQ(get("/api/runs/abc").status, 404);
  EXPECT_EQ(get("/api/runs/999/metrics", {{"key", "loss"}}).status, 404);
  EXPECT_EQ(post("/api/runs/999/metrics", batch(0, 0, 1, 2)).status, 404);
  EXPECT_EQ(call("PUT", "/api/runs/999/status", R"({"status": "killed"})").status, 404);
  EXPECT_EQ(post("/api/runs/999/evals", {{"split", "test"}}).status, 404);
  EXPECT_EQ(post("/api/runs/999/artifacts", {{"kind", "k"}, {"path", "p"}}).status, 404);
  const Answer sweep = get("/api/sweeps/none/table");
  EXPECT_EQ(sweep.status, 404);
  EXPECT_NE(sweep.body.at("error").get<std::string>().find("none"), std::string::npos);
}

TEST_F(TrackerHandler, WrongMethodIs405) {
  EXPECT_EQ(call("DELETE", "/api/runs").status, 405);
  EXPECT_EQ(call("POST", "/api/health").status, 405);
  EXPECT_EQ(call("GET", "/api/runs/1/status").status, 405);
  EXPECT_EQ(call("GE", "/api/runs").status, 405);
  EXPECT_EQ(call("PUT", "/api/sweeps/A/table").status, 405);
}

TEST_F(TrackerHandler, TokenIsRequiredButNotForHealth) {
  open("s3cret");
  EXPECT_EQ(call("GET", "/api/runs").status, 401);
  EXPECT_EQ(call("GET", "/api/runs", "", {}, "Bearer wrong!").status, 401);
  EXPECT_EQ(call("GET", "/api/runs", "", {}, "s3cret").status, 401);
  EXPECT_EQ(call("POST", "/api/runs", R"({"experiment": "e", "name": "r"})").status, 401);
  EXPECT_EQ(call("GET", "/api/runs", "", {}, "Bearer s3cret").status, 200);
  EXPECT_EQ(call("GET", "/api/health").status, 200);
  EXPECT_TRUE(call("GET", "/api/runs", "", {}, "Bearer s3cret").body.at("runs").empty());
}

TEST_F(TrackerHandler, InjectionLookingStringsAreStoredLiterally) {
  const std::string evil = "x'); DROP TABLE runs; --";
  const auto id =
      create_run({{"experiment", evil}, {"name", "\" OR 1=1 --"}, {"params", {{"note", evil}}}});
  ASSERT_EQ(
      post(run_path(id, "metrics"),
           {{"rank", 0}, {"sequence", 0}, {"points", {{{"key", evil}, {"step", 1}, {"value", 2}}}}})
          .status,
      200);
  const json run = get(run_path(id)).body;
  EXPECT_EQ(run.at("experiment"), evil);
  EXPECT_EQ(run.at("name"), "\" OR 1=1 --");
  EXPECT_EQ(run.at("params").at("note"), evil);
  EXPECT_EQ(run.at("metric_keys"), json::array({evil}));
  EXPECT_EQ(ids({{"experiment", evil}}), std::vector<std::int64_t>{id});
  EXPECT_EQ(ids({{"param.note", evil}}), std::vector<std::int64_t>{id});
  EXPECT_TRUE(ids({{"experiment", "' OR '1'='1"}}).empty());
}

TEST_F(TrackerHandler, SweepTableListsVaryingParamsInRowOrder) {
  // Created out of row order: the table sorts by row_index.
  const int d_model[] = {1024, 256, 512};
  const int row_index[] = {2, 0, 1};
  std::map<int, std::int64_t> run_by_row;
  for (int i = 0; i < 3; ++i) {
    run_by_row[row_index[i]] = create_run({{"experiment", "wmt14"},
                                           {"name", "C" + std::to_string(i)},
                                           {"sweep", "table3_C"},
                                           {"row_label", "(C) d=" + std::to_string(d_model[i])},
                                           {"row_index", row_index[i]},
                                           {"params",
                                            {{"model.d_model", d_model[i]},
                                             {"model.layers", 6},
                                             {"model.heads", 8},
                                             {"model.parameter_count", d_model[i] * 1000}}}});
    const std::string evals = run_path(run_by_row[row_index[i]], "evals");
    ASSERT_EQ(post(evals, {{"split", "valid"}, {"perplexity", 9.0}, {"bleu", 1.0}}).status, 200);
    // The newest valid eval is the one the table shows.
    ASSERT_EQ(post(evals, {{"split", "valid"}, {"perplexity", 5.0 - i}, {"bleu", 25.0 + i}}).status,
              200);
  }
  const Answer answer = get("/api/sweeps/table3_C/table");
  ASSERT_EQ(answer.status, 200) << answer.body.dump();
  const json& table = answer.body;
  EXPECT_EQ(table.at("sweep"), "table3_C");
  // Only d_model differs among the runs: layers and heads are the same in all three.
  EXPECT_EQ(table.at("columns"), json::parse(R"([{"name": "model.d_model", "kind": "param"},
                                                  {"name": "params", "kind": "param"},
                                                  {"name": "dev_ppl", "kind": "eval"},
                                                  {"name": "dev_bleu", "kind": "eval"}])"));
  const json& rows = table.at("rows");
  ASSERT_EQ(rows.size(), 3u);
  const int expected_d_model[] = {256, 512, 1024};  // rows 0, 1, 2 were created as i = 1, 2, 0
  const int created_as[] = {1, 2, 0};
  for (int row = 0; row < 3; ++row) {
    const json& values = rows[row].at("values");
    EXPECT_EQ(rows[row].at("row_index"), row);
    EXPECT_EQ(rows[row].at("run_id"), run_by_row[row]);
    EXPECT_EQ(rows[row].at("status"), "running");
    EXPECT_EQ(rows[row].at("row_label"), "(C) d=" + std::to_string(expected_d_model[row]));
    EXPECT_EQ(values.size(), 4u);
    EXPECT_EQ(values.at("model.d_model"), expected_d_model[row]);
    EXPECT_EQ(values.at("params"), expected_d_model[row] * 1000);
    EXPECT_DOUBLE_EQ(values.at("dev_ppl").get<double>(), 5.0 - created_as[row]);
    EXPECT_DOUBLE_EQ(values.at("dev_bleu").get<double>(), 25.0 + created_as[row]);
  }
}

TEST_F(TrackerHandler, SweepTableAddsTestAndReferenceColumns) {
  const auto id = create_run({{"experiment", "wmt14"},
                              {"name", "base"},
                              {"sweep", "base"},
                              {"row_index", 0},
                              {"params",
                               {{"model.d_model", 512},
                                {"reference.bleu", 25.8},
                                {"reference.ppl", 4.92},
                                {"ref.params", 65}}}});  // an older trainer's spelling
  const auto other = create_run({{"experiment", "wmt14"},
                                 {"name", "A"},
                                 {"sweep", "base"},
                                 {"row_index", 1},
                                 {"params", {{"model.d_model", 512}, {"model.heads", 1}}}});
  ASSERT_EQ(post(run_path(id, "evals"), {{"split", "test"}, {"bleu", 26.1}}).status, 200);
  const json table = get("/api/sweeps/base/table").body;
  // The columns come from the runs: model.heads differs (one run lacks it), d_model does not; the
  // reference figures are the runs' reference.* params, sorted by name.
  EXPECT_EQ(table.at("columns"), json::parse(R"([{"name": "model.heads", "kind": "param"},
                                                  {"name": "params", "kind": "param"},
                                                  {"name": "dev_ppl", "kind": "eval"},
                                                  {"name": "dev_bleu", "kind": "eval"},
                                                  {"name": "test_bleu", "kind": "eval"},
                                                  {"name": "reference.bleu", "kind": "reference"},
                                                  {"name": "reference.params", "kind": "reference"},
                                                  {"name": "reference.ppl", "kind": "reference"}])"))
      << table.dump();
  const json& values = table.at("rows").at(0).at("values");
  EXPECT_TRUE(values.at("model.heads").is_null());
  EXPECT_TRUE(values.at("dev_ppl").is_null());
  EXPECT_DOUBLE_EQ(values.at("test_bleu").get<double>(), 26.1);
  EXPECT_DOUBLE_EQ(values.at("reference.bleu").get<double>(), 25.8);
  EXPECT_EQ(values.at("reference.params"), 65);
  const json& second = table.at("rows").at(1);
  EXPECT_EQ(second.at("run_id"), other);
  EXPECT_EQ(second.at("values").at("model.heads"), 1);
  EXPECT_TRUE(second.at("values").at("reference.bleu").is_null());
  EXPECT_TRUE(second.at("values").at("test_bleu").is_null());

  // A one-run sweep has no param that varies: only the results.
  create_run(
      {{"experiment", "wmt14"}, {"name", "solo"}, {"sweep", "solo"}, {"params", {{"a", 1}}}});
  EXPECT_EQ(get("/api/sweeps/solo/table").body.at("columns").size(), 3u);
}

// GET /api/runs: name, deleted, metrics, params and sort; summary fields attempts, duration_s,
// deleted_at; no metric_keys in summaries; every bad parameter named.
TEST_F(TrackerHandler, ListRunsSelectsColumnsAndSorts) {
  const auto a = create_run({{"experiment", "e"}, {"name", "same"}, {"params", {{"lr", 0.5}}}});
  const auto b = create_run({{"experiment", "e"}, {"name", "same"}, {"params", {{"lr", 0.1}}}});
  const auto c = create_run({{"experiment", "e"}, {"name", "other"}});
  const auto points = [](double loss, double bleu) {
    return json{{"rank", 0},
                {"sequence", 1},
                {"points",
                 {{{"key", "loss"}, {"step", 1}, {"value", loss + 1}},
                  {{"key", "loss"}, {"step", 2}, {"value", loss}},
                  {{"key", "bleu"}, {"step", 2}, {"value", bleu}}}}};
  };
  ASSERT_EQ(post(run_path(a, "metrics"), points(2.0, 20.0)).status, 200);
  ASSERT_EQ(post(run_path(b, "metrics"), points(1.0, 30.0)).status, 200);
  ASSERT_EQ(call("PUT", run_path(c, "status"), R"({"status": "failed"})").status, 200);

  EXPECT_EQ(ids({{"name", "same"}}), (std::vector<std::int64_t>{a, b}));
  const json runs = get("/api/runs", {{"metrics", "*"}, {"params", "lr"}}).body.at("runs");
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].at("last_metrics"), json::parse(R"({"bleu": 20.0, "loss": 2.0})"));
  EXPECT_EQ(runs[0].at("params"), json::parse(R"({"lr": 0.5})"));
  EXPECT_EQ(runs[2].at("last_metrics"), json::object()) << "no metrics: an empty object";
  EXPECT_EQ(runs[2].at("params"), json::object());
  EXPECT_EQ(runs[0].at("attempts"), 1);
  EXPECT_TRUE(runs[0].at("deleted_at").is_null());
  EXPECT_GE(runs[0].at("duration_s").get<double>(), 0.0);
  EXPECT_FALSE(runs[0].contains("metric_keys"));
  const json plain = get("/api/runs").body.at("runs");
  EXPECT_FALSE(plain[0].contains("last_metrics"));
  EXPECT_FALSE(plain[0].contains("params"));
  const json only_loss = get("/api/runs", {{"metrics", "loss"}}).body.at("runs");
  EXPECT_EQ(only_loss[1].at("last_metrics"), json::parse(R"({"loss": 1.0})"));

  // Runs without the value sort last, in both directions.
  EXPECT_EQ(ids({{"sort", "metric:loss"}}), (std::vector<std::int64_t>{b, a, c}));
  EXPECT_EQ(ids({{"sort", "-metric:bleu"}}), (std::vector<std::int64_t>{b, a, c}));
  EXPECT_EQ(ids({{"sort", "param:lr"}}), (std::vector<std::int64_t>{b, a, c}));
  EXPECT_EQ(ids({{"sort", "-run_id"}}), (std::vector<std::int64_t>{c, b, a}));
  EXPECT_EQ(ids({{"sort", "name"}}), (std::vector<std::int64_t>{c, a, b}));
  EXPECT_EQ(ids({{"sort", "-ended_at"}}), (std::vector<std::int64_t>{c, a, b}));

  const auto field_of = [&](const std::map<std::string, std::string>& query) {
    const Answer answer = get("/api/runs", query);
    EXPECT_EQ(answer.status, 400) << answer.body.dump();
    return answer.body.value("field", "");
  };
  EXPECT_EQ(field_of({{"sort", "bogus"}}), "sort");
  EXPECT_EQ(field_of({{"sort", "metric:"}}), "sort");
  EXPECT_EQ(field_of({{"deleted", "2"}}), "deleted");
  EXPECT_EQ(field_of({{"metrics", "loss,,bleu"}}), "metrics");
  EXPECT_EQ(field_of({{"params", ""}}), "params");
}

TEST_F(TrackerHandler, DeleteHidesARunAndRestoreBringsItBack) {
  const auto a = create_run({{"experiment", "e"}, {"name", "a"}, {"sweep", "S"}});
  const auto b = create_run({{"experiment", "e"}, {"name", "b"}, {"sweep", "S"}});
  ASSERT_EQ(call("PUT", run_path(b, "status"), R"({"status": "finished"})").status, 200);
  EXPECT_EQ(get("/api/sweeps").body,
            json::parse(R"({"sweeps": [{"sweep": "S", "runs": 2, "finished": 1, "running": 1,
                                         "experiment": "e"}]})"));
  const Answer deleted = call("DELETE", run_path(a));
  ASSERT_EQ(deleted.status, 200) << deleted.body.dump();
  EXPECT_EQ(deleted.body, json({{"run_id", a}, {"deleted", true}}));
  EXPECT_EQ(ids({}), std::vector<std::int64_t>{b});
  EXPECT_EQ(ids({{"deleted", "1"}}), std::vector<std::int64_t>{a});
  EXPECT_EQ(ids({{"deleted", "all"}}), (std::vector<std::int64_t>{a, b}));
  EXPECT_EQ(get("/api/sweeps/S/table").body.at("rows").size(), 1u);
  EXPECT_EQ(get("/api/sweeps").body.at("sweeps")[0].at("runs"), 1);
  const Answer still = get(run_path(a));
  ASSERT_EQ(still.status, 200);
  EXPECT_TRUE(still.body.at("deleted_at").is_number());
  EXPECT_EQ(call("DELETE", run_path(999)).status, 404);

  const Answer restored = call("POST", run_path(a, "restore"));
  ASSERT_EQ(restored.status, 200);
  EXPECT_EQ(restored.body, json({{"run_id", a}, {"deleted", false}}));
  EXPECT_EQ(ids({}), (std::vector<std::int64_t>{a, b}));
  EXPECT_TRUE(get(run_path(a)).body.at("deleted_at").is_null());
  EXPECT_EQ(call("POST", run_path(999, "restore")).status, 404);
  EXPECT_EQ(call("GET", run_path(a, "restore")).status, 405);
}

// The dashboard's token rules: the cookie works like the bearer header; /?token= trades the token
// for the cookie; a page without the token is a 401 HTML page; API answers stay JSON.
TEST_F(TrackerHandler, DashboardTokenCookieAndLoginRedirect) {
  open("s3cret");
  const auto page = [&](const std::string& path, const std::map<std::string, std::string>& query,
                        const std::string& cookie, const std::string& method = "GET") {
    return handler_->handle(Request{method, path, query, "", "", cookie});
  };
  const Response refused = page("/", {}, "");
  EXPECT_EQ(refused.status, 401);
  EXPECT_EQ(refused.content_type, "text/html; charset=utf-8");
  EXPECT_NE(refused.body.find("/?token="), std::string::npos) << refused.body;
  EXPECT_EQ(page("/", {{"token", "wrong"}}, "").status, 401);
  EXPECT_EQ(page("/", {}, "nmt_tracker_token=wrong").status, 401);

  const Response login = page("/", {{"token", "s3cret"}}, "");
  EXPECT_EQ(login.status, 303);
  const auto header = [&](const Response& r, const std::string& name) {
    for (const auto& [key, value] : r.headers) {
      if (key == name) return value;
    }
    return std::string();
  };
  EXPECT_EQ(header(login, "Location"), "/");
  EXPECT_EQ(header(login, "Set-Cookie"),
            "nmt_tracker_token=s3cret; HttpOnly; SameSite=Strict; Path=/");

  const std::string cookie = "theme=dark; nmt_tracker_token=s3cret";
  const Response index = page("/", {}, cookie);
  EXPECT_EQ(index.status, 200);
  EXPECT_EQ(index.content_type.rfind("text/html", 0), 0u) << index.content_type;
  EXPECT_EQ(page("/no-such-page", {}, cookie).status, 404);
  EXPECT_EQ(page("/", {}, cookie, "POST").status, 405);
  const Response api = page("/api/runs", {}, cookie);
  EXPECT_EQ(api.status, 200) << api.body;
  EXPECT_EQ(json::parse(api.body).at("runs"), json::array());
  const Response api_refused = page("/api/runs", {{"token", "s3cret"}}, "");
  EXPECT_EQ(api_refused.status, 401) << "?token= is for pages only";
  EXPECT_EQ(api_refused.content_type, "application/json");
}

// A daemon serving HTTPS marks the login cookie Secure, so a browser never sends it in the clear.
TEST_F(TrackerHandler, LoginCookieIsSecureWhenServedOverTls) {
  HandlerOptions options;
  options.secure_cookie = true;
  open("s3cret", options);
  const Response login = handler_->handle(Request{"GET", "/", {{"token", "s3cret"}}, "", "", ""});
  ASSERT_EQ(login.status, 303);
  std::string cookie;
  for (const auto& [key, value] : login.headers) {
    if (key == "Set-Cookie") cookie = value;
  }
  EXPECT_EQ(cookie, "nmt_tracker_token=s3cret; HttpOnly; Secure; SameSite=Strict; Path=/");
}

TEST_F(TrackerHandler, ReopenedDatabaseSeesEverything) {
  const auto id = create_run({{"experiment", "e"},
                              {"name", "r"},
                              {"sweep", "S"},
                              {"row_index", 0},
                              {"params", {{"model.d_model", 256}}}});
  ASSERT_EQ(post(run_path(id, "metrics"), batch(0, 3, 1, 20)).status, 200);
  ASSERT_EQ(post(run_path(id, "evals"), {{"split", "valid"}, {"perplexity", 4.5}}).status, 200);
  ASSERT_EQ(post(run_path(id, "artifacts"), {{"kind", "checkpoint"}, {"path", "c.pt"}}).status,
            200);
  ASSERT_EQ(call("PUT", run_path(id, "status"), R"({"status": "finished"})").status, 200);
  const json before = get(run_path(id)).body;

  open("");  // a fresh Database and RunStore on the same file
  EXPECT_EQ(get(run_path(id)).body, before);
  EXPECT_EQ(get(run_path(id, "metrics"), {{"key", "loss"}}).body.at("points").size(), 20u);
  EXPECT_EQ(post(run_path(id, "metrics"), batch(0, 3, 1, 20)).body.at("duplicate"), true);
  EXPECT_EQ(ids({{"param.model.d_model", "256"}}), std::vector<std::int64_t>{id});
  EXPECT_DOUBLE_EQ(
      get("/api/sweeps/S/table").body.at("rows")[0].at("values").at("dev_ppl").get<double>(), 4.5);
  // A name is no key: the same name again is a new run.
  EXPECT_NE(create_run({{"experiment", "e"}, {"name", "r"}}), id);
}

TEST_F(TrackerHandler, StoreFailureIs500WithMessageAndIsLogged) {
  const auto id = create_run({{"experiment", "e"}, {"name", "r"}});
  db_->sqlite().exec("DROP TABLE evals");
  std::ostringstream log;
  const auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>(
      "capture", std::make_shared<spdlog::sinks::ostream_sink_st>(log)));
  const Answer answer = post(run_path(id, "evals"), {{"split", "test"}, {"bleu", 1.0}});
  spdlog::set_default_logger(previous);
  EXPECT_EQ(answer.status, 500);
  EXPECT_NE(answer.body.at("error").get<std::string>().find("evals"), std::string::npos);
  // The log line names the request and the cause.
  EXPECT_NE(log.str().find("[error] store failure on POST " + run_path(id, "evals")),
            std::string::npos)
      << log.str();
  EXPECT_NE(log.str().find("no such table: evals"), std::string::npos) << log.str();
  EXPECT_EQ(get(run_path(id, "metrics"), {{"key", "loss"}}).status, 200);  // still serving
}

// 1e999 used to escape the parser as a 500 "store failure", which clients retry.
TEST_F(TrackerHandler, OutOfRangeNumbersAre400NamingTheField) {
  const auto id = create_run({{"experiment", "e"}, {"name", "r"}});
  const auto answer_to = [&](const std::string& path, const std::string& body) {
    return call("POST", path, body);
  };
  Answer a = answer_to(run_path(id, "metrics"),
                       R"({"rank": 0, "sequence": 1, "points": [{"key": "loss", "step": 1,
                           "value": 1}, {"key": "loss", "step": 2, "value": 1e999}]})");
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(a.body.at("field"), "points[1].value");
  EXPECT_NE(a.body.at("error").get<std::string>().find("1e999"), std::string::npos);
  a = answer_to("/api/runs", R"({"experiment": "e", "name": "r", "params": {"lr": -2e400}})");
  EXPECT_EQ(a.status, 400);
  EXPECT_EQ(a.body.at("field"), "params.lr");
  EXPECT_EQ(answer_to(run_path(id, "evals"), R"({"split": "t", "bleu": 1e999})").body.at("field"),
            "bleu");
  EXPECT_EQ(answer_to(run_path(id, "metrics"), R"({"rank": 1e999, "sequence": 1, "points": []})")
                .body.at("field"),
            "rank");
  // NaN is no JSON: the body is malformed.
  EXPECT_EQ(answer_to(run_path(id, "evals"), R"({"split": "t", "bleu": NaN})").body.at("field"),
            "body");
  // In range for a double, out of range for the field.
  const auto field_of = [&](const std::string& path, const json& body) {
    const Answer answer = post(path, body);
    EXPECT_EQ(answer.status, 400) << body.dump();
    return answer.body.value("field", "");
  };
  EXPECT_EQ(field_of(run_path(id, "metrics"), batch(-1, 1, 1, 2)), "rank");
  EXPECT_EQ(field_of("/api/runs", {{"experiment", "e"}, {"name", "r"}, {"world_size", 0}}),
            "world_size");
  EXPECT_EQ(field_of("/api/runs", {{"experiment", "e"}, {"name", "r"}, {"params", {{"", 1}}}}),
            "params");
  EXPECT_EQ(
      field_of(run_path(id, "artifacts"), {{"kind", "k"}, {"path", "p"}, {"averaged_from", 0}}),
      "averaged_from");
  EXPECT_EQ(
      field_of(run_path(id, "metrics"), {{"rank", 0},
                                         {"sequence", std::numeric_limits<std::uint64_t>::max()},
                                         {"points", json::array()}}),
      "sequence");
}

// Each integer a client sends has a range (tracker/API.md, "Numbers"): a step from 0 to 2^53 - 1,
// ranks and sweep rows from 0, attempts, world sizes and checkpoint counts from 1, all counts below
// 2^31. A batch with a step outside is refused whole, naming the point; the series of steps at both
// ends of the range is then read at any max_points (the extreme int64 steps once crashed every
// later read of their series).
TEST_F(TrackerHandler, IntegersOutsideTheirRangesAre400NamingTheField) {
  const auto id = create_run({{"experiment", "e"}, {"name", "r"}});
  const auto field_of = [&](const std::string& path, const json& body) {
    const Answer answer = post(path, body);
    EXPECT_EQ(answer.status, 400) << body.dump();
    return answer.body.value("field", "");
  };
  const auto points = [](std::int64_t first, std::int64_t second) {
    return json{{"rank", 0},
                {"sequence", 1},
                {"points",
                 {{{"key", "k"}, {"step", first}, {"value", 1}},
                  {{"key", "k"}, {"step", second}, {"value", 2}}}}};
  };
  constexpr std::int64_t kMaxStep = (std::int64_t{1} << 53) - 1;
  constexpr std::int64_t kMaxCount = (std::int64_t{1} << 31) - 1;
  const Answer refused = post(
      run_path(id, "metrics"),
      points(std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()));
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(refused.body.value("field", ""), "points[0].step");
  EXPECT_NE(refused.body.value("error", "").find("from 0 to 9007199254740991"), std::string::npos)
      << refused.body.dump();
  EXPECT_EQ(field_of(run_path(id, "metrics"), points(0, kMaxStep + 1)), "points[1].step");
  EXPECT_EQ(field_of(run_path(id, "metrics"), points(-1, 1)), "points[0].step");
  EXPECT_TRUE(get(run_path(id, "metrics"), {{"key", "k"}}).body.at("points").empty())
      << "a refused batch stores nothing";

  EXPECT_EQ(post(run_path(id, "metrics"), points(0, kMaxStep)).status, 200);
  for (const char* max_points : {"1", "2", "10000", "9223372036854775807"}) {
    const Answer series = get(run_path(id, "metrics"), {{"key", "k"}, {"max_points", max_points}});
    ASSERT_EQ(series.status, 200) << max_points << ": " << series.body.dump();
    EXPECT_EQ(series.body.at("last").at("step"), kMaxStep);
    EXPECT_EQ(series.body.at("points").front().at("step"), 0);
  }
  EXPECT_EQ(
      get("/api/series", {{"runs", std::to_string(id)}, {"keys", "*"}, {"max_points", "1"}}).status,
      200);
  EXPECT_EQ(get(run_path(id, "metrics"),
                {{"key", "k"}, {"after_step", "-9223372036854775808"}, {"max_points", "1"}})
                .body.at("points")
                .size(),
            1u);

  json rank_batch = points(1, 2);
  rank_batch["rank"] = kMaxCount;
  EXPECT_EQ(field_of(run_path(id, "metrics"), rank_batch), "rank");
  json sequence_batch = points(1, 2);
  sequence_batch["sequence"] = -1;
  EXPECT_EQ(field_of(run_path(id, "metrics"), sequence_batch), "sequence");
  EXPECT_EQ(field_of(run_path(id, "evals"), {{"split", "t"}, {"step", -1}}), "step");
  EXPECT_EQ(
      field_of(run_path(id, "artifacts"), {{"kind", "k"}, {"path", "p"}, {"step", kMaxStep + 1}}),
      "step");
  EXPECT_EQ(field_of(run_path(id, "artifacts"),
                     {{"kind", "k"}, {"path", "p"}, {"averaged_from", kMaxCount + 1}}),
            "averaged_from");
  const auto run = [](const json& more) {
    json body = {{"experiment", "e"}, {"name", "r2"}};
    body.update(more);
    return body;
  };
  EXPECT_EQ(field_of("/api/runs", run({{"world_size", kMaxCount + 1}})), "world_size");
  EXPECT_EQ(field_of("/api/runs", run({{"row_index", -1}})), "row_index");
  EXPECT_EQ(field_of("/api/runs", run({{"uid", "abcdefgh12"}, {"attempt", kMaxCount + 1}})),
            "attempt");
  EXPECT_EQ(post("/api/runs", run({{"world_size", kMaxCount}, {"row_index", 0}})).status, 200);
}

TEST_F(TrackerHandler, DeepOrHugeBodiesAre400BeforeParsing) {
  HandlerOptions options;
  options.json.max_depth = 8;
  options.json.max_elements = 100;
  open("", options);
  const auto id = create_run({{"experiment", "e"}, {"name", "r"}});
  const Answer deep = call("POST", "/api/runs", std::string(100000, '['));
  EXPECT_EQ(deep.status, 400);
  EXPECT_EQ(deep.body.at("field"), "body");
  EXPECT_NE(deep.body.at("error").get<std::string>().find("limit of 8 levels"), std::string::npos);
  // Brackets inside strings are text, not nesting.
  EXPECT_EQ(
      post("/api/runs", {{"experiment", "e"}, {"name", std::string(50, '[') + "\\\"{"}}).status,
      200);
  const Answer huge = post(run_path(id, "metrics"), batch(0, 1, 1, 30));
  EXPECT_EQ(huge.status, 400);
  EXPECT_NE(huge.body.at("error").get<std::string>().find("limit of 100 elements"),
            std::string::npos);
  EXPECT_EQ(post(run_path(id, "metrics"), batch(0, 1, 1, 10)).status, 200);
}

TEST_F(TrackerHandler, SeriesAnswersAreBoundedAndSaySo) {
  HandlerOptions options;
  options.max_response_points = 10;
  open("", options);
  const auto id = create_run({{"experiment", "e"}, {"name", "r"}});
  ASSERT_EQ(post(run_path(id, "metrics"), batch(0, 1, 1, 100)).status, 200);
  for (const std::string asked : {"", "5", "10", "1000"}) {
    std::map<std::string, std::string> query = {{"key", "loss"}};
    if (!asked.empty()) query["max_points"] = asked;
    const Answer a = get(run_path(id, "metrics"), query);
    ASSERT_EQ(a.status, 200);
    EXPECT_LE(a.body.at("points").size(), asked == "5" ? 5u : 10u) << asked;
    EXPECT_EQ(a.body.at("downsampled"), true) << asked;
    EXPECT_EQ(a.body.at("total_points"), 100) << asked;
  }
  const auto short_run = create_run({{"experiment", "e"}, {"name", "short"}});
  ASSERT_EQ(post(run_path(short_run, "metrics"), batch(0, 1, 1, 10)).status, 200);
  const Answer whole = get(run_path(short_run, "metrics"), {{"key", "loss"}});
  EXPECT_EQ(whole.body.at("points").size(), 10u);
  EXPECT_EQ(whole.body.at("downsampled"), false);
  EXPECT_EQ(whole.body.at("total_points"), 10);
}

// The server asks this before reading a body, so an unauthenticated body is never buffered.
// The header check also says which requests prove their connection (HttpServer's fairness): those
// with the token, never /api/health without it; every request when the daemon has no token.
TEST_F(TrackerHandler, HeaderCheckRefusesAMissingTokenWithoutTheBody) {
  open("s3cret");
  Request header_only{"POST", "/api/runs", {}, "", "", ""};
  const HeaderCheck refused = handler_->check_header(header_only);
  ASSERT_TRUE(refused.refusal.has_value());
  EXPECT_EQ(refused.refusal->status, 401);
  EXPECT_FALSE(refused.proven);
  header_only.authorization = "Bearer s3cret";
  EXPECT_FALSE(handler_->check_header(header_only).refusal.has_value());
  EXPECT_TRUE(handler_->check_header(header_only).proven);
  const HeaderCheck health = handler_->check_header(Request{"GET", "/api/health", {}, "", "", ""});
  EXPECT_FALSE(health.refusal.has_value());
  EXPECT_FALSE(health.proven);
  header_only.authorization = "Bearer wrong";
  EXPECT_FALSE(handler_->check_header(header_only).proven);
  open("");
  const HeaderCheck open_daemon =
      handler_->check_header(Request{"POST", "/api/runs", {}, "", "", ""});
  EXPECT_FALSE(open_daemon.refusal.has_value());
  EXPECT_TRUE(open_daemon.proven);
}

TEST_F(TrackerHandler, ConcurrentIngestLosesNothing) {
  const auto id = create_run({{"experiment", "e"}, {"name", "r"}});
  std::vector<std::thread> ranks;
  for (int rank = 0; rank < 4; ++rank) {
    ranks.emplace_back([&, rank] {
      for (int sequence = 0; sequence < 25; ++sequence) {
        const std::string body = batch(rank, sequence, rank * 250 + sequence * 10 + 1, 10).dump();
        const Response response =
            handler_->handle(Request{"POST", run_path(id, "metrics"), {}, "", body, ""});
        EXPECT_EQ(response.status, 200) << response.body;
      }
    });
  }
  for (std::thread& thread : ranks) {
    thread.join();
  }
  EXPECT_EQ(get(run_path(id, "metrics"), {{"key", "loss"}}).body.at("points").size(), 1000u);
}

// A trainer SIGKILLed never reports its end; its resumed attempt re-sends the steps after the
// checkpoint. Over HTTP: attempt 1 is crashed once attempt 2 registers, a late report of attempt 1
// replaces that on its row only, and each (key, step) keeps the latest value delivered.
TEST_F(TrackerHandler, ResumeAfterAKilledAttemptMarksItCrashedAndKeepsLatestPoints) {
  const json spec = {{"experiment", "e"}, {"name", "r"}, {"uid", "killed-attempt-uid"}};
  const auto id = create_run(spec);
  ASSERT_EQ(post(run_path(id, "metrics"), batch(0, 0, 1, 6)).body.at("stored"), 6);
  json resumed = spec;
  resumed["attempt"] = 2;
  ASSERT_EQ(post("/api/runs", resumed).body.at("resumed"), true);
  json retrained = batch(0, 100, 5, 4);  // attempt 2 from a checkpoint at step 4: steps 5..8
  for (json& point : retrained.at("points")) point["value"] = -point.at("step").get<double>();
  ASSERT_EQ(post(run_path(id, "metrics"), retrained).body.at("duplicate"), false);
  const json series = get(run_path(id, "metrics"), {{"key", "loss"}}).body;
  EXPECT_EQ(series.at("total_points"), 8);
  EXPECT_DOUBLE_EQ(series.at("points")[3].at("value").get<double>(), 2.5);  // step 4, attempt 1
  EXPECT_DOUBLE_EQ(series.at("points")[4].at("value").get<double>(), -5.0);
  EXPECT_DOUBLE_EQ(series.at("last").at("value").get<double>(), -8.0);

  json run = get(run_path(id)).body;
  EXPECT_EQ(run.at("status"), "running");
  EXPECT_EQ(run.at("attempt"), 2);
  EXPECT_EQ(run.at("attempts")[0].at("status"), "crashed");
  EXPECT_EQ(run.at("attempts")[0].at("ended_at"), run.at("attempts")[1].at("started_at"));
  EXPECT_EQ(run.at("attempts")[1].at("status"), "running");
  ASSERT_EQ(call("PUT", run_path(id, "status"), R"({"status": "finished"})").status, 200);
  EXPECT_EQ(get(run_path(id)).body.at("attempts")[0].at("status"), "crashed");

  const json before = get(run_path(id)).body;
  const Answer late = call("PUT", run_path(id, "status"), R"({"status": "failed", "attempt": 1})");
  ASSERT_EQ(late.status, 200) << late.body.dump();
  run = get(run_path(id)).body;
  EXPECT_EQ(run.at("attempts")[0].at("status"), "failed");
  EXPECT_EQ(run.at("attempts")[1], before.at("attempts")[1]);
  EXPECT_EQ(run.at("status"), "finished");
  EXPECT_EQ(run.at("ended_at"), before.at("ended_at"));

  // crashed is a status of the protocol: accepted in a report, named in the error for a bad one.
  const auto other = create_run({{"experiment", "e"}, {"name", "other"}});
  ASSERT_EQ(call("PUT", run_path(other, "status"), R"({"status": "crashed"})").status, 200);
  EXPECT_EQ(ids({{"status", "crashed"}}), std::vector<std::int64_t>{other});
  const Answer bad = call("PUT", run_path(other, "status"), R"({"status": "paused"})");
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.body.at("error").get<std::string>().find("crashed"), std::string::npos);
}

// A 400 for a limit names the field at fault, the limit and the flag that sets it.
void expect_over_limit(const Answer& answer, const std::string& field, const std::string& limit,
                       const std::string& flag) {
  EXPECT_EQ(answer.status, 400) << field << ": " << answer.body.dump();
  EXPECT_EQ(answer.body.value("field", ""), field) << answer.body.dump();
  const std::string error = answer.body.value("error", "");
  EXPECT_NE(error.find(limit), std::string::npos) << error;
  EXPECT_NE(error.find(flag), std::string::npos) << error;
}

TEST_F(TrackerHandler, OverlongTextsAre400NamingFieldAndLimit) {
  const auto id = create_run({{"experiment", "e"}, {"name", "r"}});
  const std::string name(256, 'n'), too_long_name(257, 'n'), too_long_text(4097, 't');
  for (const char* field : {"experiment", "name", "sweep", "row_label", "config_hash",
                            "git_revision", "host", "slurm_job_id", "slurm_array_id"}) {
    json spec = {{"experiment", "e"}, {"name", "r2"}};
    spec[field] = too_long_name;
    expect_over_limit(post("/api/runs", spec), field, "256", "--max-name-bytes");
    spec[field] = name;  // at the limit: accepted
    EXPECT_EQ(post("/api/runs", spec).status, 200) << field;
  }
  json spec = {{"experiment", "e"}, {"name", "r3"}, {"config", std::string((1u << 20) + 1, 'c')}};
  expect_over_limit(post("/api/runs", spec), "config", "1048576", "--max-config-bytes");
  spec["config"] = std::string(1u << 20, 'c');
  EXPECT_EQ(post("/api/runs", spec).status, 200);
  spec = {{"experiment", "e"}, {"name", "r4"}, {"params", {{too_long_name, 1}}}};
  expect_over_limit(post("/api/runs", spec), "params", "256", "--max-name-bytes");
  spec["params"] = {{"data.path", too_long_text}};
  expect_over_limit(post("/api/runs", spec), "params.data.path", "4096", "--max-text-bytes");

  json metrics = batch(0, 0, 1, 2);
  metrics["points"][1]["key"] = too_long_name;
  expect_over_limit(post(run_path(id, "metrics"), metrics), "points[1].key", "256",
                    "--max-name-bytes");
  expect_over_limit(post(run_path(id, "evals"), {{"split", too_long_name}}), "split", "256",
                    "--max-name-bytes");
  for (const char* field : {"checkpoint", "signature"}) {
    expect_over_limit(post(run_path(id, "evals"), {{"split", "valid"}, {field, too_long_text}}),
                      field, "4096", "--max-text-bytes");
  }
  expect_over_limit(post(run_path(id, "artifacts"), {{"kind", too_long_name}, {"path", "p"}}),
                    "kind", "256", "--max-name-bytes");
  expect_over_limit(
      post(run_path(id, "artifacts"), {{"kind", "checkpoint"}, {"path", too_long_text}}), "path",
      "4096", "--max-text-bytes");

  // Nothing of a refused write was stored.
  EXPECT_EQ(ids({{"name", "r4"}}).size(), 0u);
  const json run = get(run_path(id)).body;
  EXPECT_TRUE(run.at("metric_keys").empty()) << run.dump();
  EXPECT_TRUE(run.at("evals").empty());
  EXPECT_TRUE(run.at("artifacts").empty());
  // The same sequence, with keys within the limit, is a new batch.
  EXPECT_EQ(post(run_path(id, "metrics"), batch(0, 0, 1, 2)).body.at("stored"), 2);
}

TEST_F(TrackerHandler, MetricKeysPerRunAreLimitedAndKnownKeysStayAccepted) {
  HandlerOptions options;
  options.writes.max_metric_keys = 5;
  open("", options);
  const auto id = create_run({{"experiment", "e"}, {"name", "r"}});
  const auto keyed = [](std::int64_t sequence, std::vector<std::string> keys, int step) {
    json points = json::array();
    for (const auto& key : keys) points.push_back({{"key", key}, {"step", step}, {"value", 1.0}});
    return json{{"rank", 0}, {"sequence", sequence}, {"points", points}};
  };
  ASSERT_EQ(post(run_path(id, "metrics"), keyed(0, {"a", "b", "c"}, 1)).status, 200);
  // Three new keys beside three stored: refused whole, the known key `c` too.
  const Answer over = post(run_path(id, "metrics"), keyed(1, {"c", "d", "e", "f"}, 2));
  expect_over_limit(over, "points", "5", "--max-metric-keys");
  EXPECT_NE(over.body.at("error").get<std::string>().find("6 distinct"), std::string::npos);
  EXPECT_EQ(get(run_path(id)).body.at("metric_keys"), json({"a", "b", "c"}));
  EXPECT_EQ(get(run_path(id, "metrics"), {{"key", "c"}}).body.at("total_points"), 1);
  // Up to the limit, then the run's own keys forever, and none beyond.
  EXPECT_EQ(post(run_path(id, "metrics"), keyed(1, {"c", "d", "e"}, 2)).body.at("stored"), 3);
  EXPECT_EQ(post(run_path(id, "metrics"), keyed(2, {"a", "b", "c", "d", "e"}, 3)).status, 200);
  expect_over_limit(post(run_path(id, "metrics"), keyed(3, {"a", "z"}, 4)), "points", "5",
                    "--max-metric-keys");
  EXPECT_EQ(get(run_path(id, "metrics"), {{"key", "a"}}).body.at("total_points"), 2);  // 1, 3
  // A batch with more distinct keys than any run may hold is refused before the store is asked.
  const auto other = create_run({{"experiment", "e"}, {"name", "other"}});
  expect_over_limit(post(run_path(other, "metrics"), keyed(0, {"1", "2", "3", "4", "5", "6"}, 1)),
                    "points", "5", "--max-metric-keys");
  EXPECT_TRUE(get(run_path(other)).body.at("metric_keys").empty());
}

TEST_F(TrackerHandler, ParamsPerRunAreLimitedOverResumes) {
  HandlerOptions options;
  options.writes.max_params = 3;
  open("", options);
  json spec = {{"experiment", "e"}, {"name", "r"}, {"uid", "params-limit-uid"}};
  spec["params"] = {{"a", 1}, {"b", 2}, {"c", 3}, {"d", 4}};
  expect_over_limit(post("/api/runs", spec), "params", "3", "--max-params");
  EXPECT_TRUE(ids({{"uid", "params-limit-uid"}}).empty());
  spec["params"] = {{"a", 1}, {"b", 2}};
  const auto id = create_run(spec);
  spec["attempt"] = 2;
  spec["params"] = {{"b", 20}, {"c", 3}};  // one new key: 3 in all
  ASSERT_EQ(post("/api/runs", spec).status, 200);
  spec["attempt"] = 3;
  spec["params"] = {{"a", 10}, {"d", 4}};  // a fourth key: refused, the resume with it
  expect_over_limit(post("/api/runs", spec), "params", "3", "--max-params");
  const json run = get(run_path(id)).body;
  EXPECT_EQ(run.at("attempt"), 2);
  EXPECT_EQ(run.at("params"), json({{"a", 1}, {"b", 20}, {"c", 3}}));
  spec["params"] = {{"a", 10}};  // known keys only
  EXPECT_EQ(post("/api/runs", spec).body.at("resumed"), true);
  EXPECT_EQ(get(run_path(id)).body.at("params").at("a"), 10);
  // A replay stores nothing, so it is answered as before whatever params it carries.
  spec["params"] = {{"x", 1}, {"y", 2}};
  EXPECT_EQ(post("/api/runs", spec).status, 200);
  EXPECT_EQ(get(run_path(id)).body.at("params").size(), 3u);
}

TEST_F(TrackerHandler, WriteLimitsMustBePositive) {
  HandlerOptions options;
  options.writes.max_metric_keys = 0;
  EXPECT_THROW(open("", options), std::invalid_argument);
}

}  // namespace
}  // namespace nmt::tracker

namespace nmt::tracker {
namespace {

// evals=: per split, the figures of the latest eval (newest created_at, then id; not the highest
// step), under exactly the keys SPLIT/bleu, SPLIT/chrf, SPLIT/ppl; a figure the latest eval lacks
// is absent, not taken from an older one. Sorting by eval:, runs without the figure last.
TEST_F(TrackerHandler, ListRunsCarriesLatestEvalsAndSortsByThem) {
  const auto a = create_run({{"experiment", "e"}, {"name", "a"}});
  const auto b = create_run({{"experiment", "e"}, {"name", "b"}});
  const auto c = create_run({{"experiment", "e"}, {"name", "c"}});
  const auto eval = [&](std::int64_t run, const json& body) {
    ASSERT_EQ(post(run_path(run, "evals"), body).status, 200) << body.dump();
  };
  eval(a, {{"split", "test"}, {"step", 100}, {"bleu", 20.0}, {"chrf", 40.0}});
  eval(a, {{"split", "valid"}, {"step", 100}, {"perplexity", 7.7}});
  eval(a, {{"split", "test"}, {"step", 50}, {"bleu", 25.0}});
  eval(b, {{"split", "test"}, {"bleu", 30.0}, {"chrf", 55.5}});

  const json runs = get("/api/runs", {{"evals", "*"}}).body.at("runs");
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].at("last_evals"), json::parse(R"({"test/bleu": 25.0, "valid/ppl": 7.7})"));
  EXPECT_EQ(runs[1].at("last_evals"), json::parse(R"({"test/bleu": 30.0, "test/chrf": 55.5})"));
  EXPECT_EQ(runs[2].at("last_evals"), json::object()) << "no evals: an empty object";
  EXPECT_FALSE(get("/api/runs").body.at("runs")[0].contains("last_evals"));
  const json some = get("/api/runs", {{"evals", "test/bleu,valid/chrf"}}).body.at("runs");
  EXPECT_EQ(some[0].at("last_evals"), json::parse(R"({"test/bleu": 25.0})"));

  EXPECT_EQ(ids({{"sort", "-eval:test/bleu"}}), (std::vector<std::int64_t>{b, a, c}));
  EXPECT_EQ(ids({{"sort", "eval:test/bleu"}}), (std::vector<std::int64_t>{a, b, c}));
  EXPECT_EQ(ids({{"sort", "-eval:valid/ppl"}}), (std::vector<std::int64_t>{a, b, c}));
  EXPECT_EQ(ids({{"sort", "eval:test/chrf"}, {"evals", "test/chrf"}}),
            (std::vector<std::int64_t>{b, a, c}));

  for (const auto& [query, field] :
       std::vector<std::pair<std::map<std::string, std::string>, std::string>>{
           {{{"evals", "test/loss"}}, "evals"},
           {{{"evals", ""}}, "evals"},
           {{{"evals", "bleu"}}, "evals"},
           {{{"evals", "test/bleu,,valid/ppl"}}, "evals"},
           {{{"sort", "eval:test"}}, "sort"},
           {{{"sort", "-eval:/bleu"}}, "sort"}}) {
    const Answer answer = get("/api/runs", query);
    EXPECT_EQ(answer.status, 400) << answer.body.dump();
    EXPECT_EQ(answer.body.value("field", ""), field) << answer.body.dump();
  }
}

// A text artifact's content: kept, flagged in the run (never sent with it), served with the type
// of its extension and headers that forbid scripts; 404 without content; bounded by
// max_content_bytes; refused for a path that is not a text type.
TEST_F(TrackerHandler, ArtifactContentIsServedWithItsTypeAndNoScripts) {
  HandlerOptions options;
  options.writes.max_content_bytes = 64;
  open("", options);
  const auto id = create_run({{"experiment", "e"}, {"name", "r"}});
  const auto other = create_run({{"experiment", "e"}, {"name", "other"}});
  const std::string markdown = "# Report\n<script>alert(1)</script>\nBLEU 27.3 \xc3\xa9\n";
  const std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\"/>";
  const auto record = [&](const json& body) {
    const Answer answer = post(run_path(id, "artifacts"), body);
    EXPECT_EQ(answer.status, 200) << answer.body.dump();
    return answer.body.value("artifact_id", std::int64_t{0});
  };
  const auto md_id =
      record({{"kind", "analysis"}, {"path", "/r/analysis.md"}, {"content", markdown}});
  const auto svg_id = record({{"kind", "chart"}, {"path", "/r/analysis.svg"}, {"content", svg}});
  const auto json_id = record({{"kind", "summary"}, {"path", "/r/a.JSON"}, {"content", "{}"}});
  const auto ckpt_id = record({{"kind", "checkpoint"}, {"path", "/r/ckpt.h5"}});

  const json artifacts = get(run_path(id)).body.at("artifacts");
  ASSERT_EQ(artifacts.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(artifacts[i].at("has_content"), i < 3) << artifacts[i].dump();
    EXPECT_FALSE(artifacts[i].contains("content")) << artifacts[i].dump();
  }

  const auto content = [&](std::int64_t run, const std::string& artifact) {
    return handler_->handle(
        Request{"GET", run_path(run, "artifacts/" + artifact + "/content"), {}, "", "", ""});
  };
  const auto header = [](const Response& r, const std::string& name) {
    for (const auto& [key, value] : r.headers) {
      if (key == name) return value;
    }
    return std::string("(none)");
  };
  for (const auto& [artifact, body, type] :
       std::vector<std::tuple<std::int64_t, std::string, std::string>>{
           {md_id, markdown, "text/markdown; charset=utf-8"},
           {svg_id, svg, "image/svg+xml"},
           {json_id, "{}", "application/json"}}) {
    const Response r = content(id, std::to_string(artifact));
    EXPECT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(r.body, body);
    EXPECT_EQ(r.content_type, type);
    EXPECT_EQ(header(r, "X-Content-Type-Options"), "nosniff");
    EXPECT_EQ(header(r, "Content-Security-Policy"),
              "default-src 'none'; style-src 'unsafe-inline'; sandbox");
  }
  for (const auto& [run, artifact] : std::vector<std::pair<std::int64_t, std::string>>{
           {id, std::to_string(ckpt_id)},  // recorded without content
           {id, "999"},
           {other, std::to_string(md_id)},  // another run's artifact
           {id, "x"},
           {999, std::to_string(md_id)}}) {
    const Response r = content(run, artifact);
    EXPECT_EQ(r.status, 404) << run << " " << artifact << ": " << r.body;
    EXPECT_EQ(header(r, "Content-Security-Policy"), "(none)");
  }

  const std::string limit(64, 'x');
  EXPECT_EQ(post(run_path(id, "artifacts"), {{"kind", "k"}, {"path", "a.txt"}, {"content", limit}})
                .status,
            200);
  expect_over_limit(
      post(run_path(id, "artifacts"), {{"kind", "k"}, {"path", "a.txt"}, {"content", limit + "x"}}),
      "content", "64", "--max-content-bytes");
  const Answer binary = post(run_path(id, "artifacts"),
                             {{"kind", "k"}, {"path", "/r/page.html"}, {"content", "<p>"}});
  EXPECT_EQ(binary.status, 400);
  EXPECT_EQ(binary.body.value("field", ""), "content") << binary.body.dump();
  EXPECT_EQ(get(run_path(id)).body.at("artifacts").size(), 5u) << "refused writes store nothing";
}

// after_step pages through a series exactly, never downsampled, each page within the response
// bound: a long series can be read in full (nmt-tracker export).
TEST_F(TrackerHandler, AfterStepPagesThroughTheWholeSeries) {
  HandlerOptions options;
  options.max_response_points = 10;
  open("", options);
  const auto id = create_run({{"experiment", "e"}, {"name", "r"}});
  ASSERT_EQ(post(run_path(id, "metrics"), batch(0, 1, 1, 95)).status, 200);
  std::vector<std::int64_t> steps;
  std::int64_t after = -1;
  for (int page = 0; page < 20; ++page) {
    const Answer a =
        get(run_path(id, "metrics"), {{"key", "loss"}, {"after_step", std::to_string(after)}});
    ASSERT_EQ(a.status, 200) << a.body.dump();
    EXPECT_EQ(a.body.at("downsampled"), false);
    EXPECT_EQ(a.body.at("total_points"), 95);
    EXPECT_LE(a.body.at("points").size(), 10u);
    if (a.body.at("points").empty()) break;
    for (const json& p : a.body.at("points")) {
      steps.push_back(p.at("step").get<std::int64_t>());
      EXPECT_EQ(p.at("value").get<double>(), 10.0 / static_cast<double>(steps.back()));
    }
    after = steps.back();
  }
  ASSERT_EQ(steps.size(), 95u);
  for (std::size_t i = 0; i < steps.size(); ++i)
    EXPECT_EQ(steps[i], static_cast<std::int64_t>(i) + 1);
  const Answer bad = get(run_path(id, "metrics"), {{"key", "loss"}, {"after_step", "x"}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.body.value("field", ""), "after_step");
}

// GET /api/series answers many series at once, each exactly as GET /api/runs/{run}/metrics
// answers it: downsampled alike, keys a run lacks empty alike, runs in the order asked.
TEST_F(TrackerHandler, SeriesOfRunsAnswerAsTheSingleSeriesRoute) {
  const auto points = [](const std::string& key, std::int64_t rank, int count, double scale) {
    json list = json::array();
    for (int step = 1; step <= count; ++step) {
      list.push_back({{"key", key}, {"step", step * 3 + rank}, {"value", scale * step + rank}});
    }
    return list;
  };
  const auto a = create_run({{"experiment", "e"}, {"name", "a"}});
  const auto b = create_run({{"experiment", "e"}, {"name", "b"}});
  const auto c = create_run({{"experiment", "e"}, {"name", "c"}});
  ASSERT_EQ(post(run_path(a, "metrics"),
                 {{"rank", 0}, {"sequence", 1}, {"points", points("loss", 0, 100, 0.5)}})
                .status,
            200);
  ASSERT_EQ(post(run_path(a, "metrics"),
                 {{"rank", 1}, {"sequence", 1}, {"points", points("loss", 1, 40, 2.0)}})
                .status,
            200);
  ASSERT_EQ(post(run_path(a, "metrics"),
                 {{"rank", 0}, {"sequence", 2}, {"points", points("valid/bleu", 0, 7, 3.0)}})
                .status,
            200);
  ASSERT_EQ(post(run_path(b, "metrics"),
                 {{"rank", 0}, {"sequence", 1}, {"points", points("loss", 0, 12, 1.5)}})
                .status,
            200);

  for (const std::string max_points : {"", "1", "16", "5000"}) {
    for (const std::string keys : {"*", "valid/bleu,loss,absent"}) {
      std::map<std::string, std::string> query = {{"runs", fmt::format("{},{},{}", c, a, b)},
                                                  {"keys", keys}};
      if (!max_points.empty()) query["max_points"] = max_points;
      const Answer many = get("/api/series", query);
      ASSERT_EQ(many.status, 200) << many.body.dump();
      EXPECT_EQ(many.body.at("max_points"), max_points.empty() ? 10000 : std::stoi(max_points));
      // keys=*: each run's own keys, by key; a list: every key of every run, in its order.
      std::vector<std::pair<std::int64_t, std::string>> expected;
      if (keys == "*") {
        expected = {{a, "loss"}, {a, "valid/bleu"}, {b, "loss"}};
      } else {
        for (const auto run : {c, a, b}) {
          for (const char* key : {"valid/bleu", "loss", "absent"}) expected.emplace_back(run, key);
        }
      }
      const json& series = many.body.at("series");
      ASSERT_EQ(series.size(), expected.size()) << keys << " " << max_points;
      for (std::size_t i = 0; i < expected.size(); ++i) {
        const auto& [run, key] = expected[i];
        std::map<std::string, std::string> single_query = {{"key", key}};
        if (!max_points.empty()) single_query["max_points"] = max_points;
        const Answer single = get(run_path(run, "metrics"), single_query);
        ASSERT_EQ(single.status, 200);
        json one = series[i];
        EXPECT_EQ(one.at("run_id"), run);
        one.erase("run_id");
        EXPECT_EQ(one, single.body) << "run " << run << " key " << key << " max " << max_points;
      }
    }
  }
  const Answer downsampled =
      get("/api/series", {{"runs", std::to_string(a)}, {"keys", "loss"}, {"max_points", "16"}});
  EXPECT_EQ(downsampled.body.at("series").at(0).at("downsampled"), true);
  EXPECT_LE(downsampled.body.at("series").at(0).at("points").size(), 16u);
  EXPECT_EQ(downsampled.body.at("series").at(0).at("total_points"), 140);
}

TEST_F(TrackerHandler, SeriesOfRunsBadQueryIs400NamingTheParameter) {
  const auto id = create_run({{"experiment", "e"}, {"name", "r"}});
  const std::string run = std::to_string(id);
  const auto field_of = [&](const std::map<std::string, std::string>& query) {
    const Answer answer = get("/api/series", query);
    EXPECT_EQ(answer.status, 400) << answer.body.dump();
    return answer.body.value("field", "");
  };
  EXPECT_EQ(field_of({{"keys", "loss"}}), "runs");
  EXPECT_EQ(field_of({{"runs", ""}, {"keys", "loss"}}), "runs");
  EXPECT_EQ(field_of({{"runs", run + ",x"}, {"keys", "loss"}}), "runs");
  EXPECT_EQ(field_of({{"runs", run + ",,1"}, {"keys", "loss"}}), "runs");
  EXPECT_EQ(field_of({{"runs", "1.5"}, {"keys", "loss"}}), "runs");
  EXPECT_EQ(field_of({{"runs", run}}), "keys");
  EXPECT_EQ(field_of({{"runs", run}, {"keys", ""}}), "keys");
  EXPECT_EQ(field_of({{"runs", run}, {"keys", "loss,"}}), "keys");
  EXPECT_EQ(field_of({{"runs", run}, {"keys", "loss"}, {"max_points", "0"}}), "max_points");
  EXPECT_EQ(field_of({{"runs", run}, {"keys", "loss"}, {"max_points", "-3"}}), "max_points");
  EXPECT_EQ(field_of({{"runs", run}, {"keys", "loss"}, {"max_points", "ten"}}), "max_points");
  EXPECT_EQ(field_of({{"runs", run}, {"keys", "loss"}, {"key", "loss"}}), "key");
  // 50 runs (kMaxSeriesRuns) are answered; 51 are refused before any is looked up.
  std::string fifty = run, fifty_one;
  for (int i = 1; i < 50; ++i) fifty += "," + run + std::to_string(i);
  fifty_one = fifty + ",999999";
  EXPECT_EQ(field_of({{"runs", fifty_one}, {"keys", "loss"}}), "runs");
  EXPECT_EQ(get("/api/series", {{"runs", fifty}, {"keys", "loss"}}).status, 404) << "unknown runs";
  EXPECT_EQ(
      get("/api/series", {{"runs", run + "," + run}, {"keys", "loss"}}).body.at("series").size(),
      1u)
      << "a run named twice is answered once";
  EXPECT_EQ(get("/api/series", {{"runs", "999999"}, {"keys", "*"}}).status, 404);
  EXPECT_EQ(get("/api/series", {{"runs", "999999"}, {"keys", "loss"}}).status, 404);
  EXPECT_EQ(call("POST", "/api/series", "{}").status, 405);
}

// Each series is bounded by --max-response-points, and all of them together by
// kSeriesPointsFactor times it: past that, every series gets an equal share. More than
// kMaxSeriesPerRequest run and key pairs are refused.
TEST_F(TrackerHandler, SeriesOfRunsAreBoundedPerSeriesAndInAll) {
  HandlerOptions options;
  options.max_response_points = 10;  // so at most 200 points in all
  open("", options);
  const auto id = create_run({{"experiment", "e"}, {"name", "r"}});
  const std::string run = std::to_string(id);
  json points = json::array();
  for (int k = 0; k < 25; ++k) {
    for (int step = 1; step <= 50; ++step) {
      points.push_back({{"key", fmt::format("k{:02d}", k)}, {"step", step}, {"value", step}});
    }
  }
  ASSERT_EQ(
      post(run_path(id, "metrics"), {{"rank", 0}, {"sequence", 1}, {"points", points}}).status,
      200);

  const Answer one = get("/api/series", {{"runs", run}, {"keys", "k00"}, {"max_points", "1000"}});
  ASSERT_EQ(one.status, 200) << one.body.dump();
  EXPECT_EQ(one.body.at("max_points"), 10);
  EXPECT_LE(one.body.at("series").at(0).at("points").size(), 10u);
  EXPECT_EQ(one.body.at("series").at(0).at("downsampled"), true);

  const Answer all = get("/api/series", {{"runs", run}, {"keys", "*"}});
  ASSERT_EQ(all.status, 200) << all.body.dump();
  ASSERT_EQ(all.body.at("series").size(), 25u);
  EXPECT_EQ(all.body.at("max_points"), 8) << "200 points shared by 25 series";
  std::size_t total = 0;
  for (const json& s : all.body.at("series")) {
    EXPECT_LE(s.at("points").size(), 8u);
    EXPECT_EQ(s.at("downsampled"), true);
    EXPECT_EQ(s.at("total_points"), 50);
    total += s.at("points").size();
  }
  EXPECT_LE(total, 200u);
  EXPECT_GT(total, 100u);

  // 2000 pairs are answered, 2001 refused (field keys), by list and by "*".
  std::vector<std::string> keys;
  for (int k = 0; k < 2001; ++k) keys.push_back(fmt::format("m{}", k));
  const std::string listed = fmt::format("{}", fmt::join(keys.begin(), keys.end() - 1, ","));
  EXPECT_EQ(get("/api/series", {{"runs", run}, {"keys", listed}}).body.at("series").size(), 2000u);
  const Answer over = get("/api/series", {{"runs", run}, {"keys", listed + ",m2000"}});
  EXPECT_EQ(over.status, 400);
  EXPECT_EQ(over.body.value("field", ""), "keys");
  json many = json::array();
  for (const std::string& key : keys) many.push_back({{"key", key}, {"step", 1}, {"value", 1.0}});
  ASSERT_EQ(post(run_path(id, "metrics"), {{"rank", 0}, {"sequence", 2}, {"points", many}}).status,
            200);
  const Answer star = get("/api/series", {{"runs", run}, {"keys", "*"}});
  EXPECT_EQ(star.status, 400) << "25 + 2001 keys";
  EXPECT_EQ(star.body.value("field", ""), "keys");
}

}  // namespace
}  // namespace nmt::tracker
