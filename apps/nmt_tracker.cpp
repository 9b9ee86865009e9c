// nmt-tracker: the command line to nmt-trackerd (tracker/API.md): the runs, one run with its
// attempts, a metric series, two runs side by side, a sweep's ablation table in the layout of the
// paper's Table 3, and the two writes scripts need (log-eval, set-status). Names and keys come from
// whoever wrote to the daemon: every text printed passes through printable() (table_format.h),
// except --json output, which is the daemon's JSON as sent.

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>

#include "common/cli.h"
#include "tracker/client/http_client.h"
#include "tracker/client/table_format.h"

namespace {

using nlohmann::json;
using nmt::tracker::HttpClient;
using nmt::tracker::json_cell;
using nmt::tracker::printable;
using Table = std::vector<std::vector<std::string>>;

// The daemon did not answer (or cannot be found): exit status 3, so scripts can tell it apart.
constexpr int kExitUnreachable = 3;
struct Unreachable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Daemon {
  std::string url;
  std::string port_file;
  std::string token_file;
  int timeout_s = 30;
};

// The file's text without surrounding blanks, or nullopt when it cannot be read.
std::optional<std::string> read_trimmed(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto begin = text.find_first_not_of(" \t\r\n");
  const auto end = text.find_last_not_of(" \t\r\n");
  return begin == std::string::npos ? "" : text.substr(begin, end - begin + 1);
}

std::unique_ptr<HttpClient> connect(const Daemon& d) {
  nmt::tracker::Url url;
  if (!d.url.empty()) {
    url = nmt::tracker::parse_url(d.url);
  } else if (!d.port_file.empty()) {
    // nmt-trackerd writes the port it listens on once it is ready, and removes it on exit.
    const auto port = read_trimmed(d.port_file);
    if (!port) throw Unreachable("no port file " + d.port_file + ": is nmt-trackerd running?");
    url = nmt::tracker::parse_url("http://127.0.0.1:" + *port);
  } else {
    throw nmt::UsageError("say where the daemon is: --url http://HOST:PORT or --port-file");
  }
  std::string token;
  if (!d.token_file.empty()) {
    const auto text = read_trimmed(d.token_file);
    if (!text) throw std::runtime_error("cannot read the token file " + d.token_file);
    token = *text;
  }
  return std::make_unique<HttpClient>(url, token, std::chrono::seconds(d.timeout_s));
}

// One request; the answer's JSON, or an exception naming the request and the daemon's error.
json call(HttpClient& http, const std::string& method, const std::string& target,
          const std::string& body = "") {
  nmt::tracker::HttpResponse response;
  try {
    response = http.request(method, target, body);
  } catch (const nmt::tracker::HttpError& e) {
    throw Unreachable(fmt::format("cannot reach nmt-trackerd at {}: {} (is it running?)",
                                  http.url().to_string(), e.what()));
  }
  const json answer = json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (response.status != 200) {
    // The daemon's message quotes what it was sent (a sweep name, a key).
    const std::string message = answer.is_object() && answer.contains("error")
                                    ? json_cell(answer["error"])
                                    : printable(response.body.substr(0, 300));
    throw std::runtime_error(fmt::format("{} {}: {} {}", method, target, response.status, message));
  }
  if (answer.is_discarded()) {
    throw std::runtime_error(method + " " + target + ": the answer is not JSON");
  }
  return answer;
}

json get(HttpClient& http, const std::string& target) {
  return call(http, "GET", target);
}

std::string query_string(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string out;
  for (const auto& [key, value] : params) {
    out += (out.empty() ? "?" : "&") + nmt::tracker::url_encode(key) + "=" +
           nmt::tracker::url_encode(value);
  }
  return out;
}

std::string time_cell(const json& v) {
  if (!v.is_number()) return "-";
  const auto seconds = static_cast<std::time_t>(v.get<double>());
  return fmt::format("{:%Y-%m-%d %H:%M:%S}", fmt::localtime(seconds));
}

void print_table(const std::vector<std::string>& header, const Table& rows) {
  std::cout << nmt::tracker::render_text_table(header, rows);
}

// ---- runs, show, metrics -----------------------------------------------------------------------

struct RunsQuery {
  std::string experiment, sweep, status, uid;
  std::vector<std::string> params;  // key=value
  bool json = false;
};

int cmd_runs(HttpClient& http, const RunsQuery& q) {
  std::vector<std::pair<std::string, std::string>> params;
  if (!q.experiment.empty()) params.emplace_back("experiment", q.experiment);
  if (!q.sweep.empty()) params.emplace_back("sweep", q.sweep);
  if (!q.status.empty()) params.emplace_back("status", q.status);
  if (!q.uid.empty()) params.emplace_back("uid", q.uid);
  for (const auto& p : q.params) {
    const auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw nmt::UsageError("--param wants key=value, got '" + printable(p) + "'");
    }
    params.emplace_back("param." + p.substr(0, eq), p.substr(eq + 1));
  }
  const json answer = get(http, "/api/runs" + query_string(params));
  if (q.json) return std::cout << answer.dump(2) << "\n", 0;
  Table rows;
  for (const auto& r : answer.at("runs")) {
    rows.push_back({json_cell(r["run_id"]), json_cell(r["experiment"]), json_cell(r["name"]),
                    json_cell(r["sweep"]), json_cell(r["row_label"]), json_cell(r["status"]),
                    json_cell(r["attempt"]), json_cell(r["host"]), time_cell(r["started_at"]),
                    time_cell(r["ended_at"])});
  }
  print_table(
      {"id", "experiment", "name", "sweep", "row", "status", "attempt", "host", "started", "ended"},
      rows);
  return 0;
}

Table rows_of(const json& list, const std::vector<std::string>& keys) {
  Table rows;
  for (const auto& item : list) {
    std::vector<std::string> row;
    for (const auto& key : keys) row.push_back(json_cell(item.value(key, json())));
    rows.push_back(row);
  }
  return rows;
}

int cmd_show(HttpClient& http, std::int64_t run, bool as_json) {
  const json r = get(http, "/api/runs/" + std::to_string(run));
  if (as_json) return std::cout << r.dump(2) << "\n", 0;
  for (const char* key : {"run_id", "uid", "experiment", "name", "sweep", "row_label", "row_index",
                          "status", "attempt", "config_hash", "git_revision", "host", "world_size",
                          "slurm_job_id", "slurm_array_id"}) {
    std::cout << fmt::format("{:<16}{}\n", key, json_cell(r.value(key, json())));
  }
  std::cout << fmt::format("{:<16}{}\n{:<16}{}\n", "started_at", time_cell(r["started_at"]),
                           "ended_at", time_cell(r["ended_at"]));
  const std::vector<std::string> attempt_keys = {"attempt",    "status",       "host",
                                                 "world_size", "slurm_job_id", "slurm_array_id"};
  std::cout << "\nattempts\n";
  Table attempts = rows_of(r.value("attempts", json::array()), attempt_keys);
  const json attempt_list = r.value("attempts", json::array());
  for (std::size_t i = 0; i < attempts.size(); ++i) {
    attempts[i].push_back(time_cell(attempt_list[i].value("started_at", json())));
    attempts[i].push_back(time_cell(attempt_list[i].value("ended_at", json())));
  }
  std::vector<std::string> attempt_header = attempt_keys;
  attempt_header.insert(attempt_header.end(), {"started", "ended"});
  print_table(attempt_header, attempts);
  std::cout << "\nparams\n";
  const json params = r.value("params", json::object());
  for (const auto& [key, value] : params.items()) {
    std::cout << fmt::format("  {} = {}\n", printable(key), json_cell(value));
  }
  const std::vector<std::string> eval_keys = {"split", "step",       "checkpoint", "bleu",
                                              "chrf",  "perplexity", "signature"};
  std::cout << "\nevals\n";
  print_table(eval_keys, rows_of(r.value("evals", json::array()), eval_keys));
  const std::vector<std::string> artifact_keys = {"kind", "path", "step", "averaged_from"};
  std::cout << "\nartifacts\n";
  print_table(artifact_keys, rows_of(r.value("artifacts", json::array()), artifact_keys));
  std::cout << "\nmetric keys\n";
  for (const auto& key : r.value("metric_keys", json::array()))
    std::cout << "  " << json_cell(key) << "\n";
  return 0;
}

json metric_series(HttpClient& http, std::int64_t run, const std::string& key, int max_points,
                   int rank) {
  std::vector<std::pair<std::string, std::string>> params = {{"key", key}};
  if (max_points > 0) params.emplace_back("max_points", std::to_string(max_points));
  if (rank >= 0) params.emplace_back("rank", std::to_string(rank));
  return get(http, "/api/runs/" + std::to_string(run) + "/metrics" + query_string(params));
}

struct MetricsQuery {
  std::int64_t run = 0;
  std::string key;
  bool csv = false;
  bool json = false;
  int max_points = 0;
  int rank = -1;
};

int cmd_metrics(HttpClient& http, const MetricsQuery& q) {
  const json answer = metric_series(http, q.run, q.key, q.max_points, q.rank);
  if (q.json) return std::cout << answer.dump(2) << "\n", 0;
  if (answer.value("downsampled", false)) {
    std::cerr << fmt::format(
        "{} points, downsampled to {} buckets by step (mean value, with min and max); the daemon "
        "answers at most its --max-response-points; --rank R or --json for one rank's series\n",
        answer.value("total_points", std::int64_t{0}), answer.at("points").size());
  }
  const std::vector<std::string> keys = {"step", "value", "min", "max", "rank", "time"};
  const Table rows = rows_of(answer.at("points"), keys);
  if (!q.csv) return print_table(keys, rows), 0;
  std::cout << "step,value,min,max,rank,time\n";
  for (auto row : rows) {
    for (auto& field : row) {
      if (field == "-") field.clear();  // a missing min/max is an empty CSV field
    }
    std::cout << fmt::format("{}\n", fmt::join(row, ","));
  }
  return 0;
}

// ---- compare -----------------------------------------------------------------------------------

// The newest value of every metric series of `run` (the daemon's "last": exact also when the
// series is long enough to be answered downsampled).
std::map<std::string, json> latest_metrics(HttpClient& http, const json& run) {
  std::map<std::string, json> latest;
  for (const auto& key : run.value("metric_keys", json::array())) {
    const json series = metric_series(http, run.at("run_id").get<std::int64_t>(), key, 1, -1);
    const json last = series.value("last", json());
    latest[key] = last.is_object() ? last.value("value", json()) : json();
  }
  return latest;
}

// The newest eval of each split: highest step, the later one on a tie. An eval recorded without a
// step (the daemon sends null) ranks below every step.
std::map<std::string, json> newest_evals(const json& run) {
  const auto step = [](const json& eval) {
    const json s = eval.value("step", json());
    return s.is_number_integer() ? s.get<std::int64_t>() : std::int64_t{-1};
  };
  std::map<std::string, json> newest;
  for (const auto& eval : run.value("evals", json::array())) {
    const json name = eval.value("split", json(""));
    const std::string split = name.is_string() ? name.get<std::string>() : name.dump();
    const auto it = newest.find(split);
    if (it == newest.end() || step(eval) >= step(it->second)) newest[split] = eval;
  }
  return newest;
}

template <class Rows>
Table side_by_side(const Rows& a, const Rows& b, bool only_differences) {
  std::set<std::string> keys;
  for (const auto& [key, value] : a) keys.insert(key);
  for (const auto& [key, value] : b) keys.insert(key);
  Table rows;
  for (const auto& key : keys) {
    const json va = a.count(key) ? json(a.at(key)) : json();
    const json vb = b.count(key) ? json(b.at(key)) : json();
    if (!only_differences || va != vb) rows.push_back({key, json_cell(va), json_cell(vb)});
  }
  return rows;
}

int cmd_compare(HttpClient& http, const std::vector<std::int64_t>& ids) {
  const json a = get(http, "/api/runs/" + std::to_string(ids.at(0)));
  const json b = get(http, "/api/runs/" + std::to_string(ids.at(1)));
  const std::string ha = "run " + std::to_string(ids[0]), hb = "run " + std::to_string(ids[1]);
  for (const auto* r : {&a, &b}) {
    std::cout << fmt::format("run {}: {}/{} ({})\n", json_cell((*r)["run_id"]),
                             json_cell((*r)["experiment"]), json_cell((*r)["name"]),
                             json_cell((*r)["status"]));
  }
  const auto params = [](const json& r) {
    return r.value("params", json::object()).get<std::map<std::string, json>>();
  };
  std::cout << "\nparams that differ\n";
  print_table({"param", ha, hb}, side_by_side(params(a), params(b), true));
  std::cout << "\nmetrics (latest value)\n";
  print_table({"metric", ha, hb},
              side_by_side(latest_metrics(http, a), latest_metrics(http, b), false));
  std::cout << "\nevals (newest per split)\n";
  const auto ea = newest_evals(a), eb = newest_evals(b);
  Table rows;
  for (const char* field : {"step", "bleu", "chrf", "perplexity"}) {
    std::map<std::string, json> fa, fb;
    for (const auto& [split, e] : ea) fa[split + " " + field] = e.value(field, json());
    for (const auto& [split, e] : eb) fb[split + " " + field] = e.value(field, json());
    for (auto& row : side_by_side(fa, fb, false)) rows.push_back(std::move(row));
  }
  print_table({"eval", ha, hb}, rows);
  return 0;
}

// ---- table -------------------------------------------------------------------------------------

int cmd_table(HttpClient& http, const std::string& sweep, const std::string& format) {
  const json table = get(http, "/api/sweeps/" + nmt::tracker::url_encode(sweep) + "/table");
  std::cout << nmt::tracker::render_sweep_table(table, nmt::tracker::parse_table_format(format));
  return 0;
}

struct EvalArgs {
  std::int64_t run = 0;
  std::string split = "test", checkpoint, signature;
  std::optional<std::int64_t> step;
  std::optional<double> bleu, chrf, perplexity;
};

// Records an evaluation (scripts: the quickstart and nmt-sweep log their BLEU this way).
int cmd_log_eval(HttpClient& http, const EvalArgs& a) {
  json body = {{"split", a.split}};
  if (!a.checkpoint.empty()) body["checkpoint"] = a.checkpoint;
  if (!a.signature.empty()) body["signature"] = a.signature;
  if (a.step) body["step"] = *a.step;
  if (a.bleu) body["bleu"] = *a.bleu;
  if (a.chrf) body["chrf"] = *a.chrf;
  if (a.perplexity) body["perplexity"] = *a.perplexity;
  std::cout << call(http, "POST", fmt::format("/api/runs/{}/evals", a.run), body.dump()).dump()
            << "\n";
  return 0;
}

// Sets a run's status by hand: for a run whose process died without saying so (SIGKILL, a node
// lost), which would otherwise show "running" for ever.
int cmd_set_status(HttpClient& http, std::int64_t run, const std::string& status) {
  call(http, "PUT", fmt::format("/api/runs/{}/status", run), json{{"status", status}}.dump());
  std::cout << fmt::format("run {}: {}\n", run, status);
  return 0;
}

// The subcommands' arguments, filled in by CLI11.
struct Commands {
  EvalArgs eval;
  CLI::App* eval_cmd = nullptr;
  RunsQuery runs;
  std::int64_t show_run = 0;
  bool show_json = false;
  MetricsQuery metrics;
  std::vector<std::int64_t> compare_runs;
  std::int64_t status_run = 0;
  std::string status;
  CLI::App* status_cmd = nullptr;
  std::string sweep, format = "md";
  CLI::App *runs_cmd = nullptr, *show_cmd = nullptr, *metrics_cmd = nullptr, *compare_cmd = nullptr;
};

void add_commands(CLI::App& app, Commands& c) {
  c.runs_cmd = app.add_subcommand("runs", "List runs (filters are ANDed)");
  c.runs_cmd->add_option("--experiment", c.runs.experiment, "Only this experiment");
  c.runs_cmd->add_option("--sweep", c.runs.sweep, "Only this sweep");
  c.runs_cmd->add_option("--status", c.runs.status,
                         "running, finished, failed, killed or preempted");
  c.runs_cmd->add_option("--uid", c.runs.uid, "Only the run with this uid");
  c.runs_cmd->add_option("--param", c.runs.params, "key=value, e.g. model.layers=6; repeatable");
  c.runs_cmd->add_flag("--json", c.runs.json, "Print the daemon's JSON");

  c.show_cmd = app.add_subcommand("show", "One run: summary, params, evals, artifacts");
  c.show_cmd->add_option("RUN", c.show_run, "Run id")->required();
  c.show_cmd->add_flag("--json", c.show_json, "Print the daemon's JSON");

  auto* metrics = c.metrics_cmd = app.add_subcommand("metrics", "One metric series of a run");
  metrics->add_option("RUN", c.metrics.run, "Run id")->required();
  metrics->add_option("KEY", c.metrics.key, "Metric key, e.g. train/loss")->required();
  metrics->add_flag("--csv", c.metrics.csv, "CSV: step,value,min,max,rank,time");
  metrics->add_flag("--json", c.metrics.json, "Print the daemon's JSON");
  metrics->add_option("--max-points", c.metrics.max_points, "Downsample to about N points");
  metrics->add_option("--rank", c.metrics.rank, "Only this rank's points");

  c.compare_cmd = app.add_subcommand("compare", "Two runs: differing params, metrics, evals");
  c.compare_cmd->add_option("RUNS", c.compare_runs, "Two run ids")->required()->expected(2);

  auto* eval = c.eval_cmd = app.add_subcommand("log-eval", "Record an evaluation of a run");
  eval->add_option("RUN", c.eval.run, "Run id")->required();
  eval->add_option("--split", c.eval.split, "valid or test")->capture_default_str();
  eval->add_option("--bleu", c.eval.bleu, "BLEU");
  eval->add_option("--chrf", c.eval.chrf, "chrF");
  eval->add_option("--perplexity", c.eval.perplexity, "Perplexity");
  eval->add_option("--signature", c.eval.signature, "sacreBLEU-style signature of the score");
  eval->add_option("--checkpoint", c.eval.checkpoint, "Checkpoint evaluated");
  eval->add_option("--step", c.eval.step, "Training step of the checkpoint");

  c.status_cmd = app.add_subcommand(
      "set-status", "Set a run's status, e.g. for a run that died without reporting it");
  c.status_cmd->add_option("RUN", c.status_run, "Run id")->required();
  c.status_cmd->add_option("STATUS", c.status, "running, finished, failed, killed or preempted")
      ->required()
      ->check(CLI::IsMember({"running", "finished", "failed", "killed", "preempted"}));

  auto* table = app.add_subcommand("table", "A sweep's ablation table (paper Table 3)");
  table->add_option("--sweep", c.sweep, "Sweep name")->required();
  table->add_option("--format", c.format, "md, csv or json")
      ->check(CLI::IsMember({"md", "csv", "json"}))
      ->capture_default_str();
}

int dispatch(const Daemon& daemon, const Commands& c) {
  try {
    const auto http = connect(daemon);
    if (*c.runs_cmd) return cmd_runs(*http, c.runs);
    if (*c.show_cmd) return cmd_show(*http, c.show_run, c.show_json);
    if (*c.metrics_cmd) return cmd_metrics(*http, c.metrics);
    if (*c.compare_cmd) return cmd_compare(*http, c.compare_runs);
    if (*c.eval_cmd) return cmd_log_eval(*http, c.eval);
    if (*c.status_cmd) return cmd_set_status(*http, c.status_run, c.status);
    return cmd_table(*http, c.sweep, c.format);
  } catch (const Unreachable& e) {
    spdlog::error("{}", e.what());
    return kExitUnreachable;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Query nmt-trackerd: runs, metric series, comparisons, and a sweep's ablation "
      "table in the layout of the paper's Table 3.",
      "nmt-tracker"};
  app.footer(
      "Exit status: 0 done, 1 error (unknown run, refused), 2 bad arguments, 3 daemon "
      "unreachable.");
  app.require_subcommand(1);
  app.fallthrough();
  Daemon daemon;
  nmt::LogOptions log;
  log.tool = "nmt-tracker";
  app.add_option("--url", daemon.url, "The daemon, http://HOST:PORT");
  app.add_option("--port-file", daemon.port_file,
                 "The port file nmt-trackerd wrote (host 127.0.0.1)");
  app.add_option("--token-file", daemon.token_file, "File holding the bearer token");
  app.add_option("--timeout", daemon.timeout_s, "Seconds to wait for each answer")
      ->capture_default_str();
  nmt::add_logging_flags(app, log);
  Commands commands;
  add_commands(app, commands);
  return nmt::run_tool(app, log, argc, argv, [&] { return dispatch(daemon, commands); });
}
