// nmt-tracker, run as a user runs it, against a real nmt-trackerd on 127.0.0.1: listings with
// metric and param columns and sorting, runs named by id or by name, the daemon found from
// NMT_TRACKER_URL, unknown metric keys that list the run's keys, compare over N runs, plot's SVG,
// soft delete and restore, names escaped for the terminal, and one exit status per kind of error.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "tests/test_utils.h"
#include "tests/tracker_test_runs.h"
#include "tracker/client/tracker_client.h"

namespace nmt::tracker {
namespace {

using nlohmann::json;

std::size_t count_of(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

// Three runs: "alpha", and two runs that share the name "beta"; each with a train/loss curve of
// 50 steps ending at a different value, a valid/bleu series, and its own model.layers.
std::vector<std::int64_t> make_three_runs(const Daemon& daemon, const testing::TempDir& dir) {
  std::vector<std::int64_t> ids;
  const std::vector<std::pair<std::string, double>> runs = {{"alpha", 6}, {"beta", 2}, {"beta", 4}};
  for (std::size_t i = 0; i < runs.size(); ++i) {
    auto options = options_for(daemon.url(), dir);
    options.spool_path = dir.file("run" + std::to_string(i) + "/tracker_spool.rank0.jsonl");
    TrackerClient client(options);
    RunInfo info = run_info(runs[i].first);
    info.params["model.layers"] = runs[i].second;
    ids.push_back(client.start_run(info).value());
    for (int step = 0; step < 50; ++step) {
      // Last values: 1.0 + layers / 10, so alpha (6) ends highest.
      client.log_metric("train/loss", step, 1.0 + runs[i].second / 10.0 + (49 - step) * 0.1);
    }
    client.log_metric("valid/bleu", 49, 20.0 + static_cast<double>(i));
    EXPECT_TRUE(client.flush(10s));
  }
  return ids;
}

TEST(NmtTrackerCli, NamesRunsFindsTheDaemonFromTheEnvironmentAndPlots) {
  testing::TempDir dir;
  Daemon daemon(dir.path());
  const auto ids = make_three_runs(daemon, dir);
  const std::string env = "NMT_TRACKER_URL=" + daemon.url();
  const auto cli = [&](const std::string& args) { return run_cli_env(env, args, true); };
  const std::string a = std::to_string(ids[0]), b1 = std::to_string(ids[1]),
                    b2 = std::to_string(ids[2]);

  // The daemon from NMT_TRACKER_URL; times in ISO 8601 UTC, durations for people.
  const auto runs = cli("runs");
  ASSERT_EQ(runs.status, 0) << runs.out;
  EXPECT_EQ(count_of(runs.out, "client-test"), 3u) << runs.out;
  EXPECT_TRUE(std::regex_search(runs.out, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
      << runs.out;

  // By name; a shared name lists its runs; a near miss lists the names that contain it.
  const auto show = cli("show alpha");
  EXPECT_EQ(show.status, 0) << show.out;
  EXPECT_NE(show.out.find("run_id          " + a + "\n"), std::string::npos) << show.out;
  const auto shared = cli("show beta");
  EXPECT_EQ(shared.status, 1) << shared.out;
  EXPECT_NE(shared.out.find("2 runs are named 'beta': " + b1 + " ("), std::string::npos)
      << shared.out;
  const auto near = cli("show alp");
  EXPECT_EQ(near.status, 1);
  EXPECT_NE(near.out.find("names that contain it: alpha (" + a + ")"), std::string::npos)
      << near.out;

  // A mistyped metric key is an error listing the run's keys, not an empty table.
  const auto typo = cli("metrics alpha train/los");
  EXPECT_EQ(typo.status, 1);
  EXPECT_NE(typo.out.find("has no metric 'train/los'; its keys: train/loss, valid/bleu"),
            std::string::npos)
      << typo.out;
  EXPECT_EQ(cli("plot alpha --metric nope").status, 1);

  // Metric and param columns, sorted by the last loss, highest first: alpha (6), beta 4, beta 2.
  const auto sorted =
      cli("runs --metrics train/loss --params model.layers --sort=-metric:train/loss");
  ASSERT_EQ(sorted.status, 0) << sorted.out;
  EXPECT_NE(sorted.out.find("model.layers  train/loss"), std::string::npos) << sorted.out;
  const auto at = [&](const std::string& id) { return sorted.out.find("\n" + id + " "); };
  EXPECT_LT(at(a), at(b2)) << sorted.out;
  EXPECT_LT(at(b2), at(b1)) << sorted.out;
  EXPECT_TRUE(std::regex_search(sorted.out, std::regex("\n" + a + " .* 6 +1\\.6\n"))) << sorted.out;
  EXPECT_EQ(cli("runs --sort bogus").status, 2);

  // compare takes N runs: one column each; model.layers differs.
  const auto compare = cli("compare alpha " + b1 + " " + b2);
  ASSERT_EQ(compare.status, 0) << compare.out;
  EXPECT_TRUE(std::regex_search(
      compare.out, std::regex("param +run " + a + " +run " + b1 + " +run " + b2 + "\n")))
      << compare.out;
  EXPECT_TRUE(std::regex_search(compare.out, std::regex("\nmodel\\.layers +6 +2 +4\n")))
      << compare.out;
  EXPECT_TRUE(std::regex_search(compare.out, std::regex("\nvalid/bleu +20 +21 +22\n")))
      << compare.out;

  // plot: an SVG file with one curve per run, labelled by name and id.
  const std::string svg_path = dir.file("loss.svg");
  const auto plot = cli("plot alpha " + b1 + " --metric train/loss --out " + svg_path);
  ASSERT_EQ(plot.status, 0) << plot.out;
  const std::string svg = testing::read_text(svg_path);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_EQ(count_of(svg, "<polyline class=\"series\""), 2u);
  EXPECT_NE(svg.find("alpha (" + a + ")"), std::string::npos);
  EXPECT_NE(svg.find("beta (" + b1 + ")"), std::string::npos);

  // Soft delete: hidden from listings, listed with --deleted, back after restore.
  EXPECT_EQ(cli("delete " + b2).status, 0);
  const auto after = cli("runs");
  EXPECT_EQ(count_of(after.out, "client-test"), 2u) << after.out;
  const auto deleted = cli("runs --deleted");
  EXPECT_NE(deleted.out.find("\n" + b2 + " "), std::string::npos) << deleted.out;
  EXPECT_EQ(cli("show beta").status, 1);  // still two betas: a deleted run keeps its name
  EXPECT_EQ(cli("restore " + b2).status, 0);
  EXPECT_EQ(count_of(cli("runs").out, "client-test"), 3u);

  // set-status by name; the flags win over the environment.
  EXPECT_EQ(cli("set-status alpha failed").status, 0);
  EXPECT_NE(cli("runs --status failed").out.find("alpha"), std::string::npos);
  EXPECT_EQ(run_cli_env(env, "--url http://127.0.0.1:1 runs").status, 3);
}

TEST(NmtTrackerCli, ListsRunsPrintsMetricsAndTheAblationTable) {
  testing::TempDir dir;
  TokenDaemon served(dir);
  auto& [token_file, daemon, client] = served;
  const std::int64_t run =
      start_sample_run(client, "cli-run", {"valid", 5, "", 25.84, std::nullopt, 4.921, ""});
  ASSERT_TRUE(client.flush(10s));
  EXPECT_EQ(run_cli("--port-file " + daemon.port_file() + " runs").status, 1);  // no token
  const std::string where =
      "--port-file " + daemon.port_file() + " --token-file " + token_file + " ";

  const auto runs = run_cli(where + "runs --sweep abl");
  EXPECT_EQ(runs.status, 0);
  EXPECT_NE(runs.out.find("cli-run"), std::string::npos) << runs.out;

  const auto show = run_cli(where + "show " + std::to_string(run));
  EXPECT_EQ(show.status, 0);
  EXPECT_NE(show.out.find("model.layers = 6"), std::string::npos) << show.out;

  EXPECT_EQ(run_cli(where + "set-status " + std::to_string(run) + " preempted").status, 0);
  EXPECT_EQ(run_cli(where + "set-status " + std::to_string(run) + " paused").status, 2);
  const auto preempted = run_cli(where + "runs --status preempted");
  EXPECT_NE(preempted.out.find("cli-run"), std::string::npos) << preempted.out;
  const auto attempts = run_cli(where + "show " + std::to_string(run));
  EXPECT_NE(attempts.out.find("\nattempts\nattempt  status     host"), std::string::npos)
      << attempts.out;
  EXPECT_NE(attempts.out.find("\n1        preempted"), std::string::npos) << attempts.out;

  const auto csv = run_cli(where + "metrics " + std::to_string(run) + " train/loss --csv");
  EXPECT_EQ(csv.status, 0);
  EXPECT_EQ(csv.out.rfind("step,value,min,max,rank,time\n0,4.5,", 0), 0u) << csv.out;
  EXPECT_NE(csv.out.find("\n4,0.5,"), std::string::npos) << csv.out;
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 6);

  const auto table = run_cli(where + "table --sweep abl");
  EXPECT_EQ(table.status, 0);
  // One run: no param varies within the sweep, so the table shows its results only.
  EXPECT_EQ(table.out.rfind("|  | params ×10^6 | PPL (dev) | BLEU (dev) |\n", 0), 0u) << table.out;
  for (const char* part : {"\n|:---|---:|---:|---:|\n", "\n| base | 63.1 | 4.92 | 25.8 |\n"}) {
    EXPECT_NE(table.out.find(part), std::string::npos) << part << " in\n" << table.out;
  }

  daemon.stop();
  EXPECT_EQ(run_cli(where + "runs").status, 3);  // the port file is gone with the daemon
  const auto down = "--url http://127.0.0.1:" + std::to_string(daemon.port()) + " runs";
  EXPECT_EQ(run_cli(down).status, 3);
}

// The typed read client against the real daemon: found from flags or the environment, every
// answer parsed into the wire types, the hand-made writes (status, delete, restore), and errors
// that name the daemon's URL and its status.

// True when `text` holds a byte or character a terminal acts on (C0 but newline, DEL, C1).
bool has_terminal_controls(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7F) return true;
    if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) <= 0x9F)
      return true;
  }
  return false;
}

// Names come from whoever writes to the daemon: nmt-tracker prints them with their controls
// escaped, since an escape sequence in a run name would drive the reader's terminal; --json stays
// the daemon's JSON. And compare takes a run with two evals of one split without a step (a JSON
// null where a number may be).
TEST(NmtTrackerCli, EscapesNamesAndComparesEvalsWithoutSteps) {
  testing::TempDir dir;
  Daemon daemon(dir.path());
  const std::string evil =
      "run\x1b[2J\x1b]0;owned\x07\xc2\x9b"
      "31m\x7f";
  const std::string escaped = "run\\x1b[2J\\x1b]0;owned\\x07\\u009b31m\\x7f";
  std::int64_t ids[2] = {0, 0};
  for (int i = 0; i < 2; ++i) {
    auto options = options_for(daemon.url(), dir);
    options.spool_path = dir.file("run" + std::to_string(i) + "/tracker_spool.rank0.jsonl");
    TrackerClient client(options);
    RunInfo info = run_info(i == 0 ? evil : "plain");
    if (i == 0) {
      info.row_label = evil;
      info.params[evil] = 1.0;
    }
    ids[i] = client.start_run(info).value();
    client.log_metric(i == 0 ? evil : "train/loss", 1, 2.5);
    if (i == 0) {
      client.log_eval({"valid", std::nullopt, "", 20.5, std::nullopt, std::nullopt, ""});
      client.log_eval({"valid", std::nullopt, "", 21.5, std::nullopt, std::nullopt, ""});
      client.log_eval({evil, 3, "", 1.0, std::nullopt, std::nullopt, ""});
    } else {
      client.log_eval({"valid", 5, "", 26.0, std::nullopt, std::nullopt, ""});
    }
    ASSERT_TRUE(client.flush(10s));
  }
  const std::string where = "--port-file " + daemon.port_file() + " ";
  const std::string run0 = std::to_string(ids[0]), run1 = std::to_string(ids[1]);

  const auto compare = run_cli(where + "compare " + run0 + " " + run1);
  EXPECT_EQ(compare.status, 0) << compare.out;
  EXPECT_FALSE(has_terminal_controls(compare.out)) << compare.out;
  EXPECT_NE(compare.out.find("client-test/" + escaped + " (running)"), std::string::npos)
      << compare.out;
  // The later of the two step-less evals against run 2's stepped one.
  EXPECT_TRUE(std::regex_search(compare.out, std::regex("\nvalid/step +- +5\n"))) << compare.out;
  EXPECT_TRUE(std::regex_search(compare.out, std::regex("\nvalid/bleu +21\\.5 +26\n")))
      << compare.out;
  EXPECT_NE(compare.out.find(escaped + "/bleu"), std::string::npos) << compare.out;

  for (const std::string& command : std::vector<std::string>{
           "runs", "show " + run0, "table --sweep abl", "table --sweep abl --format csv",
           "metrics " + run0 + " '" + evil + "'"}) {
    const auto out = run_cli(where + command);
    EXPECT_EQ(out.status, 0) << command;
    EXPECT_FALSE(has_terminal_controls(out.out)) << command << ":\n" << out.out;
    if (command.rfind("metrics", 0) != 0) {
      EXPECT_NE(out.out.find(escaped), std::string::npos) << command << ":\n" << out.out;
    }
  }
  const auto as_json = run_cli(where + "runs --json");
  EXPECT_EQ(as_json.status, 0);
  const json listed = json::parse(as_json.out);
  std::set<std::string> names;
  for (const auto& run : listed["runs"]) names.insert(run["name"].get<std::string>());
  EXPECT_EQ(names.count(evil), 1u) << as_json.out;
}

// Evals where metrics are: eval columns in runs (by default those the runs have, or --evals),
// sorted by --sort=eval:; compare's latest eval per split and its history; export of every point
// (a daemon answering 7 points a page, so the export has to page) and eval, read back exactly.
TEST(NmtTrackerCli, EvalColumnsCompareHistoryAndExport) {
  testing::TempDir dir;
  Daemon daemon(dir.path(), 0, {"--max-response-points", "7"});
  std::map<std::string, std::int64_t> ids;
  for (const std::string name : {"alpha", "beta", "gamma"}) {
    auto options = options_for(daemon.url(), dir);
    options.spool_path = dir.file(name + "/tracker_spool.rank0.jsonl");
    TrackerClient client(options);
    ids[name] = client.start_run(run_info(name)).value();
    if (name == "alpha") {
      for (int step = 0; step < 25; ++step) client.log_metric("train/lr", step, (step + 1) * 1e-5);
      client.log_eval({"test", 100, std::nullopt, 27.5, 55.0, std::nullopt, std::nullopt});
      client.log_eval({"valid", 100, std::nullopt, std::nullopt, std::nullopt, 4.9, std::nullopt});
      client.log_eval({"test", 200, "avg.h5", 28.25, 56.0, std::nullopt, "nrefs:1"});
    } else if (name == "beta") {
      client.log_eval({"test", std::nullopt, std::nullopt, 30.0, 58.8, std::nullopt, std::nullopt});
    }
    ASSERT_TRUE(client.flush(10s));
  }
  const std::string where = "--port-file " + daemon.port_file() + " ";
  const std::string a = std::to_string(ids["alpha"]), b = std::to_string(ids["beta"]),
                    g = std::to_string(ids["gamma"]);

  // Shown by default: every figure some listed run has, the latest eval's.
  const auto runs = run_cli(where + "runs");
  ASSERT_EQ(runs.status, 0) << runs.out;
  EXPECT_NE(runs.out.find("duration  test/bleu  test/chrf  valid/ppl\n"), std::string::npos)
      << runs.out;
  EXPECT_TRUE(std::regex_search(runs.out, std::regex("\n" + a + " .* 28\\.25 +56 +4\\.9\n")))
      << runs.out;
  EXPECT_TRUE(std::regex_search(runs.out, std::regex("\n" + b + " .* 30 +58\\.8 +-\n")))
      << runs.out;
  EXPECT_TRUE(std::regex_search(runs.out, std::regex("\n" + g + " .* - +- +-\n"))) << runs.out;
  EXPECT_EQ(run_cli(where + "runs --name gamma").out.find("test/bleu"), std::string::npos);
  const auto chosen = run_cli(where + "runs --evals test/bleu");
  EXPECT_NE(chosen.out.find("test/bleu\n"), std::string::npos) << chosen.out;
  EXPECT_EQ(chosen.out.find("test/chrf"), std::string::npos) << chosen.out;

  const auto sorted = run_cli(where + "runs --sort=-eval:test/bleu");
  ASSERT_EQ(sorted.status, 0) << sorted.out;
  const auto at = [&](const std::string& id) { return sorted.out.find("\n" + id + " "); };
  EXPECT_LT(at(b), at(a)) << sorted.out;
  EXPECT_LT(at(a), at(g)) << sorted.out;
  for (const char* bad : {"runs --evals test/loss", "runs --sort eval:test", "runs --evals ,"}) {
    EXPECT_EQ(run_cli(where + bad).status, 2) << bad;
  }

  const auto compare = run_cli(where + "compare alpha beta");
  ASSERT_EQ(compare.status, 0) << compare.out;
  EXPECT_TRUE(std::regex_search(compare.out, std::regex("\ntest/bleu +28\\.25 +30\n")))
      << compare.out;
  EXPECT_TRUE(std::regex_search(compare.out, std::regex("\nvalid/ppl +4\\.9 +-\n"))) << compare.out;
  const auto history = compare.out.substr(compare.out.find("\neval history\n"));
  for (const std::string& row :
       {a + " +test +100 +- +27\\.5 +55 +-", a + " +test +200 +avg\\.h5 +28\\.25 +56 +-",
        a + " +valid +100 +- +- +- +4\\.9", b + " +test +- +- +30 +58\\.8 +-"}) {
    EXPECT_TRUE(std::regex_search(history, std::regex("\n" + row + "\n"))) << row << history;
  }

  // CSV: a header row, every point (25, over 4 pages of 7), each figure of each eval.
  const std::string csv_path = dir.file("alpha.csv");
  ASSERT_EQ(run_cli(where + "export alpha --format csv --out " + csv_path).status, 0);
  const std::string csv = testing::read_text(csv_path);
  EXPECT_EQ(run_cli(where + "export " + a).out, csv) << "csv is the default, stdout the default";
  std::istringstream lines(csv);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line, "record,key,step,value,time,rank,eval_id,checkpoint,signature");
  std::map<std::int64_t, double> lr;
  std::vector<std::string> evals;
  while (std::getline(lines, line)) {
    std::vector<std::string> cells;
    std::stringstream fields(line);
    for (std::string cell; std::getline(fields, cell, ',');) cells.push_back(cell);
    if (cells[0] == "metric") {
      ASSERT_EQ(cells[1], "train/lr") << line;
      lr[std::stoll(cells[2])] = std::strtod(cells[3].c_str(), nullptr);
      EXPECT_GT(std::stod(cells[4]), 1e9) << "UNIX seconds: " << line;
    } else {
      evals.push_back(cells[1] + "@" + cells[2] + "=" + cells[3]);
    }
  }
  ASSERT_EQ(lr.size(), 25u) << csv;
  for (const auto& [step, value] : lr) EXPECT_EQ(value, (step + 1) * 1e-5) << step;
  EXPECT_NE(csv.find("metric,train/lr,0,1e-05,"), std::string::npos) << "shortest round trip";
  EXPECT_EQ(evals,
            (std::vector<std::string>{"test/bleu@100=27.5", "test/chrf@100=55", "valid/ppl@100=4.9",
                                      "test/bleu@200=28.25", "test/chrf@200=56"}));

  // JSON Lines: one object per point and per eval (as the run's detail has it).
  const std::string jsonl_path = dir.file("alpha.jsonl");
  ASSERT_EQ(run_cli(where + "export alpha --format jsonl --out " + jsonl_path).status, 0);
  std::istringstream objects(testing::read_text(jsonl_path));
  std::size_t points = 0;
  std::vector<double> bleus;
  while (std::getline(objects, line)) {
    const json object = json::parse(line);
    if (object.at("record") == "metric") {
      const auto step = object.at("step").get<std::int64_t>();
      EXPECT_EQ(object.at("value").get<double>(), (step + 1) * 1e-5) << line;
      EXPECT_EQ(object.at("rank"), 0) << line;
      ++points;
    } else {
      ASSERT_EQ(object.at("record"), "eval") << line;
      if (!object.at("bleu").is_null()) bleus.push_back(object.at("bleu").get<double>());
    }
  }
  EXPECT_EQ(points, 25u);
  EXPECT_EQ(bleus, (std::vector<double>{27.5, 28.25}));
  EXPECT_EQ(run_cli(where + "export alpha --format parquet").status, 2);
  EXPECT_EQ(run_cli(where + "export nosuchrun").status, 1);
}

// One exit status for every argument error, 2, before any daemon is asked; --help is 0.
TEST(NmtTrackerCli, ArgumentErrorsExitTwo) {
  testing::TempDir dir;
  Daemon daemon(dir.path());
  const std::string where = "--port-file " + daemon.port_file() + " ";
  EXPECT_EQ(run_cli("--help").status, 0);
  EXPECT_EQ(run_cli("runs --help").status, 0);
  for (const std::string& args : std::vector<std::string>{
           where + "runs --no-such-flag", where, where + "compare 1", where + "show ''",
           where + "set-status 1 paused", where + "table --sweep s --format xlsx",
           where + "runs --param novalue", std::string("runs")}) {
    EXPECT_EQ(run_cli(args).status, 2) << args;
  }
  EXPECT_EQ(run_cli(where + "show 999").status, 1);  // an error, not a usage error
}

}  // namespace
}  // namespace nmt::tracker
