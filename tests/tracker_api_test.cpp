// The protocol's one definition (tracker/api): every wire type survives JSON both ways, a
// malformed field is named by its JSON path, the rules the daemon enforces are the client's, and
// the route table matches each path to its route and builds the paths clients send.

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "common/json_fields.h"
#include "tracker/api/artifact_content.h"
#include "tracker/api/routes.h"
#include "tracker/api/run_query.h"
#include "tracker/api/run_rules.h"
#include "tracker/api/wire_json.h"

namespace nmt::tracker::api {
namespace {

using nlohmann::json;

// to_json, then parse back, then to_json again: the same JSON.
template <class T>
json expect_round_trip(const T& value) {
  const json first = value;
  const T back = parse<T>(first);
  const json second = back;
  EXPECT_EQ(first, second) << first.dump();
  return first;
}

// The field a FieldError names when `text` is read as a T.
template <class T>
std::string field_of(const std::string& text) {
  try {
    parse<T>(json::parse(text));
  } catch (const FieldError& e) {
    return e.field();
  }
  ADD_FAILURE() << "no FieldError for " << text;
  return {};
}

RunSummary summary() {
  RunSummary s;
  s.run_id = 7;
  s.experiment = "wmt14";
  s.name = "base";
  s.uid = "uid-0000001";
  s.sweep = "table3";
  s.row_label = "(A)";
  s.row_index = 1;
  s.status = "finished";
  s.host = "node1";
  s.world_size = 4;
  s.attempt = 2;
  s.started_at = 100.5;
  s.ended_at = 160.5;
  s.attempts = 2;
  s.duration_s = 60.0;
  return s;
}

TEST(TrackerApi, RequestsRoundTripAndLeaveAbsentFieldsOut) {
  RunRegistration r;
  r.experiment = "e";
  r.name = "n";
  const json minimal = expect_round_trip(r);
  EXPECT_EQ(minimal, json::parse(R"({"experiment": "e", "name": "n"})"));
  r.uid = "abcdefgh";
  r.attempt = 3;
  r.sweep = "s";
  r.row_index = 2;
  r.world_size = 8;
  r.config = "model: {}";
  r.params = {{"model.d_model", 512.0}, {"model.dropout", 0.1}, {"model.positions", "learned"}};
  r.run_dir = "/scratch/runs/n";
  r.provenance = {{"command_line", "nmt-train --run-dir /scratch/runs/n"}, {"cpu", "Xeon"}};
  const json full = expect_round_trip(r);
  EXPECT_EQ(full.at("provenance").at("cpu"), "Xeon");
  EXPECT_EQ(full.at("params").at("model.d_model"), 512) << "integral params are integers";
  EXPECT_EQ(parse<RunRegistration>(json::parse(R"({"experiment": "e", "name": "n",
                                                   "params": {"flag": true}})"))
                .params.at("flag"),
            ParamValue(std::string("true")));

  expect_round_trip(StatusUpdate{"preempted", 2});
  expect_round_trip(MetricBatch{1, 99, {{"loss", 5, 2.5, 1.5}, {"lr", 5, 1e-4, std::nullopt}}});
  expect_round_trip(ArtifactRecord{"checkpoint", "c.h5", 10, 5, std::nullopt});
  expect_round_trip(ArtifactRecord{"analysis", "a.md", std::nullopt, std::nullopt, "# Report\n"});
  EvalRecord eval{"test", 3, "avg.h5", 27.3, std::nullopt, 4.9, "sig"};
  expect_round_trip(eval);
  // JSON cannot carry a diverged perplexity: it is left out rather than failing the request.
  eval.perplexity = std::numeric_limits<double>::infinity();
  eval.bleu = std::nan("");
  const json finite_only = eval;
  EXPECT_FALSE(finite_only.contains("perplexity"));
  EXPECT_FALSE(finite_only.contains("bleu"));
}

TEST(TrackerApi, AnswersRoundTrip) {
  expect_round_trip(RunCreated{3, 2, true});
  expect_round_trip(StatusAnswer{3, "killed"});
  expect_round_trip(IngestAnswer{500, false});
  expect_round_trip(EvalCreated{4});
  expect_round_trip(ArtifactCreated{5});
  expect_round_trip(DeleteAnswer{6, true});
  expect_round_trip(Health{"ok", 4});
  expect_round_trip(ErrorAnswer{"field 'x' is required", "x"});

  RunSummary s = summary();
  const json plain = expect_round_trip(s);
  EXPECT_TRUE(plain.at("deleted_at").is_null()) << "answers spell absent values as null";
  EXPECT_FALSE(plain.contains("last_metrics"));
  s.last_metrics = std::map<std::string, double>{{"loss", 1.25}};
  s.params = Params{{"lr", 0.5}};
  s.deleted_at = 200.0;
  expect_round_trip(RunList{{s, summary()}});

  RunDetail d;
  d.summary = summary();
  d.config = "a: 1";
  d.params = {{"k", "v"}};
  d.attempts = {{1, "preempted", 1.0, 2.0, "n1", 2, "77", std::nullopt, "/runs/a",
                 Params{{"gpu", "NVIDIA H200"}, {"git.dirty", "false"}, {"world_size", 2.0}}, 1.5},
                {2, "finished", 3.0, 4.0, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                 std::nullopt, Params{}, std::nullopt}};
  d.evals = {{1, {"valid", 10, std::nullopt, 20.5, 50.0, 5.5, std::nullopt}, 9.0}};
  d.artifacts = {{1, {"checkpoint", "c.h5", 10, std::nullopt, std::nullopt}, 9.5, false},
                 {2, {"analysis", "a.md", std::nullopt, std::nullopt, std::nullopt}, 9.6, true}};
  d.metric_keys = {"bleu", "loss"};
  const json detail = expect_round_trip(d);
  EXPECT_EQ(detail.at("attempts").size(), 2u) << "a detail's attempts are the list";

  MetricSeries m;
  m.key = "loss";
  m.points = {{1, 2.0, 1.0, 3.0, std::nullopt, 5.0}, {3, 1.0, 1.0, 1.0, 0, 6.0}};
  m.total_points = 40;
  m.downsampled = true;
  expect_round_trip(m);
  m.last = LastPoint{4, 0.5, 1, 7.0};
  expect_round_trip(m);

  expect_round_trip(SweepList{{{"s", 3, 1, 2, "e"}, {"t", 1, 0, 0, std::nullopt}}});
  SweepTable t;
  t.sweep = "s";
  t.columns = {{"model.heads", ColumnKind::kParam},
               {"dev_bleu", ColumnKind::kEval},
               {"train/loss", ColumnKind::kMetric},
               {"reference.bleu", ColumnKind::kReference}};
  t.rows = {{1, "r1", "(A)", 0, "finished", {{"model.heads", ParamValue(8.0)}, {"dev_bleu", {}}}}};
  const json table = expect_round_trip(t);
  EXPECT_EQ(table.at("columns")[3],
            json::parse(R"({"name": "reference.bleu", "kind": "reference"})"));
}

TEST(TrackerApi, MalformedFieldsAreNamedByPath) {
  EXPECT_EQ(field_of<RunRegistration>(R"({"experiment": "e"})"), "name");
  EXPECT_EQ(field_of<RunRegistration>(R"({"experiment": "e", "name": ""})"), "name");
  EXPECT_EQ(field_of<RunRegistration>(R"({"experiment": "e", "name": "n", "uid": "short"})"),
            "uid");
  EXPECT_EQ(field_of<RunRegistration>(R"({"experiment": "e", "name": "n", "attempt": 0})"),
            "attempt");
  EXPECT_EQ(field_of<RunRegistration>(R"({"experiment": "e", "name": "n", "world_size": 0})"),
            "world_size");
  EXPECT_EQ(field_of<RunRegistration>(R"({"experiment": "e", "name": "n", "params": {"x": [1]}})"),
            "params.x");
  EXPECT_EQ(field_of<RunRegistration>(R"({"experiment": "e", "name": "n", "params": 3})"),
            "params");
  EXPECT_EQ(field_of<StatusUpdate>(R"({"status": "paused"})"), "status");
  EXPECT_EQ(field_of<MetricBatch>(R"({"rank": -1, "sequence": 0, "points": []})"), "rank");
  EXPECT_EQ(field_of<MetricBatch>(R"({"rank": 0, "sequence": 0, "points": [{}, 5]})"),
            "points[0].key");
  EXPECT_EQ(
      field_of<MetricBatch>(
          R"({"rank": 0, "sequence": 0, "points": [{"key": "a", "step": 1, "value": 1}, 5]})"),
      "points[1]");
  EXPECT_EQ(field_of<MetricBatch>(R"({"rank": 0, "sequence": 0, "points": [
                {"key": "a", "step": 1, "value": 1}, {"key": "a", "step": 2, "value": 1},
                {"key": "a", "step": 3, "value": 1}, {"key": "a", "step": 4, "value": "x"}]})"),
            "points[3].value");
  EXPECT_EQ(field_of<MetricBatch>(R"({"rank": 0, "sequence": 18446744073709551615, "points": []})"),
            "sequence");
  EXPECT_EQ(field_of<EvalRecord>(R"({"split": "test", "bleu": "27"})"), "bleu");
  EXPECT_EQ(field_of<ArtifactRecord>(R"({"kind": "k", "path": "p", "averaged_from": 0})"),
            "averaged_from");
  EXPECT_EQ(field_of<EvalRecord>("[1]"), "body");

  // Answers name the nested field a client could not read.
  json run = summary();
  run["last_metrics"] = {{"loss", "high"}};
  EXPECT_EQ(field_of<RunList>(json{{"runs", {summary(), run}}}.dump()),
            "runs[1].last_metrics.loss");
  json detail = json::parse(R"({"config": null, "params": {}, "evals": [], "artifacts": [],
                                "metric_keys": [], "attempts": [{"attempt": 1}]})");
  detail.update(json(summary()));
  detail["attempts"] = json::parse(R"([{"attempt": 1, "started_at": 1.0}])");
  EXPECT_EQ(field_of<RunDetail>(detail.dump()), "attempts[0].status");
  EXPECT_EQ(field_of<SweepTable>(R"({"sweep": "s", "columns": [{"name": "a", "kind": "size"}],
                                     "rows": []})"),
            "columns[0].kind");
  EXPECT_EQ(field_of<SweepTable>(R"({"sweep": "s", "columns": [], "rows": [{"run_id": 1,
                                     "name": "r", "status": "running", "values": {"x": [1]}}]})"),
            "rows[0].values.x");
  EXPECT_EQ(field_of<MetricSeries>(R"({"key": "k", "points": [], "total_points": 0,
                                       "downsampled": false, "last": {"step": 1}})"),
            "last.value");
}

TEST(TrackerApi, OneRuleForUidsAndStatuses) {
  EXPECT_TRUE(is_valid_run_uid("abcd-EF_9"));
  EXPECT_TRUE(is_valid_run_uid(std::string(64, 'a')));
  EXPECT_FALSE(is_valid_run_uid(std::string(65, 'a')));
  EXPECT_FALSE(is_valid_run_uid("short"));
  EXPECT_FALSE(is_valid_run_uid("has space"));
  EXPECT_FALSE(is_valid_run_uid("dotted.uid"));
  for (const char* status : {"running", "finished", "failed", "killed", "preempted", "crashed"}) {
    EXPECT_TRUE(is_valid_run_status(status)) << status;
  }
  EXPECT_FALSE(is_valid_run_status("paused"));
  EXPECT_FALSE(is_valid_run_status(""));
}

TEST(TrackerApi, RouteTableMatchesAndBuildsEveryPath) {
  for (const Route& r : routes()) {
    std::vector<std::string> args;
    for (std::string_view p = r.pattern; p.find('{') != std::string_view::npos;
         p = p.substr(p.find('}') + 1)) {
      args.push_back("x1");
    }
    const std::string path = route_path(r.id, args);
    const RouteMatch match = match_route(r.method, path);
    ASSERT_EQ(match.outcome, RouteMatch::Outcome::kFound) << r.method << " " << path;
    EXPECT_EQ(match.id, r.id) << path;
  }
  const RouteMatch series = match_route("GET", "/api/runs/12/metrics");
  EXPECT_EQ(series.id, RouteId::kMetricSeries);
  EXPECT_EQ(series.args.at("run"), "12");
  EXPECT_EQ(match_route("POST", "/api/runs/12/metrics").id, RouteId::kIngestMetrics);
  EXPECT_EQ(match_route("DELETE", "/api/runs/12").id, RouteId::kDeleteRun);
  EXPECT_EQ(match_route("GET", "/api/sweeps/a b/table").args.at("sweep"), "a b");

  const RouteMatch wrong = match_route("PUT", "/api/runs");
  EXPECT_EQ(wrong.outcome, RouteMatch::Outcome::kWrongMethod);
  EXPECT_EQ(wrong.allowed, "POST, GET");
  EXPECT_EQ(match_route("GET", "/api/runs/1/nope").outcome, RouteMatch::Outcome::kNotFound);
  EXPECT_EQ(match_route("GET", "/api/runs//metrics").outcome, RouteMatch::Outcome::kNotFound);
  EXPECT_EQ(match_route("GET", "/api/runs/1/metrics/").outcome, RouteMatch::Outcome::kNotFound);

  EXPECT_EQ(route_path(RouteId::kSweepTable, {"table 3/C"}), "/api/sweeps/table%203%2FC/table");
  EXPECT_EQ(route_path(RouteId::kLogEval, {"5"}), "/api/runs/5/evals");
  EXPECT_THROW(route_path(RouteId::kLogEval), std::invalid_argument);
  EXPECT_THROW(route_path(RouteId::kHealth, {"1"}), std::invalid_argument);
  EXPECT_EQ(query_string({{"key", "train/loss"}, {"a b", "c&d"}}), "?key=train%2Floss&a%20b=c%26d");
}

// tracker/API.md's table of routes is the route table, row by row.
TEST(TrackerApi, ApiMdListsEveryRouteInTableOrder) {
  std::ifstream in(std::string(NMT_SOURCE_DIR) + "/tracker/API.md");
  ASSERT_TRUE(in) << "tracker/API.md";
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  std::size_t previous = 0;
  for (const Route& r : routes()) {
    const std::string row = fmt::format("| {} `{}` |", r.method, r.pattern);
    const std::size_t at = doc.find(row);
    ASSERT_NE(at, std::string::npos) << row;
    EXPECT_GT(at, previous) << row << " is out of the route table's order";
    previous = at;
  }
}

TEST(TrackerApi, RunQueryRoundTripsThroughQueryParameters) {
  RunQuery q;
  q.experiment = "wmt14";
  q.name = "base";
  q.deleted = DeletedRuns::kAll;
  q.params = {{"model.d_model", "512"}};
  q.metrics = KeySelection{false, {"train/loss", "valid/bleu"}};
  q.show_params = KeySelection{true, {}};
  q.sort = SortOrder{SortOrder::Source::kMetric, "valid/bleu", true};
  const auto pairs = to_query(q);
  const std::map<std::string, std::string> decoded(pairs.begin(), pairs.end());
  EXPECT_EQ(decoded.at("sort"), "-metric:valid/bleu");
  EXPECT_EQ(decoded.at("metrics"), "train/loss,valid/bleu");
  EXPECT_EQ(decoded.at("params"), "*");
  EXPECT_EQ(decoded.at("deleted"), "all");
  EXPECT_EQ(to_query(run_query_from(decoded)), pairs);

  const auto named = [](const std::map<std::string, std::string>& query) {
    try {
      run_query_from(query);
    } catch (const FieldError& e) {
      return e.field();
    }
    return std::string("(none)");
  };
  EXPECT_EQ(named({{"sort", "-bogus"}}), "sort");
  EXPECT_EQ(named({{"sort", "param:"}}), "sort");
  EXPECT_EQ(named({{"deleted", "yes"}}), "deleted");
  EXPECT_EQ(named({{"metrics", ",loss"}}), "metrics");
  EXPECT_EQ(named({{"experment", "x"}}), "experment");
  EXPECT_EQ(named({{"sort", "-duration_s"}, {"param.x", "1"}}), "(none)");
}

// evals=SPLIT/FIGURE,... or *, and sort=eval:SPLIT/FIGURE: parsed, written back, and every bad
// key named as the parameter it came in.
TEST(TrackerApi, EvalSelectionAndSortRoundTripAndNameTheirField) {
  RunQuery q;
  q.evals = KeySelection{false, {"test/bleu", "valid/ppl"}};
  q.sort = SortOrder{SortOrder::Source::kEval, "test/bleu", true};
  const auto pairs = to_query(q);
  const std::map<std::string, std::string> decoded(pairs.begin(), pairs.end());
  EXPECT_EQ(decoded.at("evals"), "test/bleu,valid/ppl");
  EXPECT_EQ(decoded.at("sort"), "-eval:test/bleu");
  const RunQuery back = run_query_from(decoded);
  ASSERT_TRUE(back.evals && back.sort);
  EXPECT_EQ(back.evals->keys, q.evals->keys);
  EXPECT_EQ(back.sort->source, SortOrder::Source::kEval);
  EXPECT_TRUE(run_query_from({{"evals", "*"}}).evals->all);
  // A split may itself hold a slash ("wmt14/test/bleu"); the figure is after the last one.
  EXPECT_TRUE(is_valid_eval_key("wmt14/test/chrf"));
  for (const char* bad : {"test", "test/", "/bleu", "test/BLEU", "test/perplexity", "test/bleu,"}) {
    EXPECT_FALSE(is_valid_eval_key(bad)) << bad;
    try {
      run_query_from({{"evals", bad}});
      ADD_FAILURE() << "evals=" << bad << " accepted";
    } catch (const FieldError& e) {
      EXPECT_EQ(e.field(), "evals") << bad;
    }
  }
  for (const char* bad : {"eval:test", "-eval:test/loss", "eval:"}) {
    try {
      run_query_from({{"sort", bad}});
      ADD_FAILURE() << "sort=" << bad << " accepted";
    } catch (const FieldError& e) {
      EXPECT_EQ(e.field(), "sort") << bad;
    }
  }
}

// A summary's last_evals is written only when asked for, under exactly its contract's keys; an
// artifact of a run's detail says whether it has content and never carries it.
TEST(TrackerApi, LastEvalsAndArtifactContentOnTheWire) {
  RunSummary s = summary();
  EXPECT_FALSE(json(s).contains("last_evals"));
  s.last_evals = std::map<std::string, double>{{"test/bleu", 34.9}, {"valid/ppl", 7.7}};
  const json written = expect_round_trip(s);
  EXPECT_EQ(written.at("last_evals"), json::parse(R"({"test/bleu": 34.9, "valid/ppl": 7.7})"));

  const Artifact artifact{
      3, {"analysis", "a.md", std::nullopt, std::nullopt, std::nullopt}, 1.5, true};
  const json a = artifact;
  EXPECT_EQ(a.at("has_content"), true);
  EXPECT_FALSE(a.contains("content")) << a.dump();
  EXPECT_EQ(artifact_content_type("r/analysis.md"), "text/markdown; charset=utf-8");
  EXPECT_EQ(artifact_content_type("r/CHART.SVG"), "image/svg+xml");
  EXPECT_EQ(artifact_content_type("r/analysis.json"), "application/json");
  EXPECT_EQ(artifact_content_type("r/model.h5"), std::nullopt);
  EXPECT_EQ(artifact_content_type("r.md/model"), std::nullopt);
  EXPECT_EQ(artifact_content_type("report.html"), std::nullopt);
}

}  // namespace
}  // namespace nmt::tracker::api
