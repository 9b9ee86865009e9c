// nmt-tracker: the command line to nmt-trackerd (tracker/API.md). The commands are in
// tracker/cli/commands.h; this file parses their flags and finds the daemon.

#include <cstdlib>
#include <iostream>

#include "common/cli.h"
#include "common/environment.h"
#include "tracker/api/run_rules.h"
#include "tracker/cli/commands.h"
#include "tracker/client/run_upload.h"
#include "tracker/client/tracker_reader.h"
#include "tracking/run_dir_sync.h"

namespace {

namespace cli = nmt::tracker::cli;

// The daemon did not answer (or its port file is gone): exit status 3, so scripts can tell it
// apart from an error the daemon reported.
constexpr int kExitUnreachable = 3;

struct Commands {
  nmt::tracker::DaemonFlags daemon;
  int timeout_s = 30;
  cli::RunsArgs runs;
  std::string run;  // the RUN of show, set-status, delete, restore
  bool json = false;
  cli::MetricsArgs metrics;
  cli::PlotArgs plot;
  std::vector<std::string> compare_runs;
  cli::EvalArgs eval;
  cli::ExportArgs export_args;
  std::string status;
  nmt::tracking::SyncArgs sync;
  cli::BackupArgs backup;
  std::string sweep, format = "md";
  CLI::App *runs_cmd, *show_cmd, *metrics_cmd, *plot_cmd, *compare_cmd, *eval_cmd, *status_cmd,
      *delete_cmd, *restore_cmd, *table_cmd, *export_cmd, *sync_cmd, *backup_cmd;
};

constexpr const char* kRunHelp = "Run id or name";

void add_listing_commands(CLI::App& app, Commands& c) {
  auto* runs = c.runs_cmd = app.add_subcommand("runs", "List runs (filters are ANDed)");
  runs->add_option("--experiment", c.runs.experiment, "Only this experiment");
  runs->add_option("--sweep", c.runs.sweep, "Only this sweep");
  runs->add_option("--status", c.runs.status,
                   "running, finished, failed, killed, preempted or crashed");
  runs->add_option("--uid", c.runs.uid, "Only the run with this uid");
  runs->add_option("--name", c.runs.name, "Only runs with exactly this name");
  runs->add_option("--param", c.runs.params, "key=value, e.g. model.layers=6; repeatable");
  runs->add_option("--metrics", c.runs.metric_columns,
                   "Metric keys shown as columns (last value), comma-separated, '*' for all");
  runs->add_option("--evals", c.runs.eval_columns,
                   "Latest eval figures shown as columns, SPLIT/FIGURE (FIGURE bleu, chrf or ppl), "
                   "comma-separated, '*' for all (default: those the listed runs have)");
  runs->add_option("--params", c.runs.param_columns,
                   "Param keys shown as columns, comma-separated, '*' for all");
  runs->add_option("--sort", c.runs.sort,
                   "[-]FIELD, [-]metric:KEY, [-]eval:SPLIT/FIGURE or [-]param:KEY, e.g. "
                   "-eval:test/bleu");
  runs->add_flag("--deleted", c.runs.deleted, "List soft-deleted runs instead");
  runs->add_flag("--json", c.runs.json, "Print the answer's JSON");

  c.show_cmd = app.add_subcommand("show", "One run: provenance, attempts, params, evals, metrics");
  c.show_cmd->add_option("RUN", c.run, kRunHelp)->required();
  c.show_cmd->add_flag("--json", c.json, "Print the answer's JSON (with the config)");

  auto* metrics = c.metrics_cmd = app.add_subcommand("metrics", "One metric series of a run");
  metrics->add_option("RUN", c.metrics.run, kRunHelp)->required();
  metrics->add_option("KEY", c.metrics.key, "Metric key, e.g. train/loss")->required();
  metrics->add_flag("--csv", c.metrics.csv, "CSV with every digit: step,value,min,max,rank,time");
  metrics->add_flag("--json", c.metrics.json, "Print the answer's JSON");
  metrics->add_option("--max-points", c.metrics.max_points, "Downsample to about N points");
  metrics->add_option("--rank", c.metrics.rank, "Only this rank's points");

  auto* plot = c.plot_cmd =
      app.add_subcommand("plot", "Learning curves of one metric, runs overlaid, as SVG");
  plot->add_option("RUNS", c.plot.runs, "Run ids or names")->required();
  plot->add_option("--metric", c.plot.metric, "Metric key, e.g. train/loss")->required();
  plot->add_option("--out", c.plot.out_file, "SVG file to write (default: standard output)");
  plot->add_option("--x", c.plot.x_axis, "step, or time since each run's start")
      ->check(CLI::IsMember({"step", "time"}))
      ->capture_default_str();
  plot->add_flag("--log-y", c.plot.log_y, "Logarithmic y axis (perplexities)");
  plot->add_option("--width", c.plot.width, "Pixels")->capture_default_str();
  plot->add_option("--height", c.plot.height, "Pixels")->capture_default_str();
  plot->add_option("--max-points", c.plot.max_points, "Points asked of the daemon per run")
      ->capture_default_str();

  c.compare_cmd =
      app.add_subcommand("compare", "Runs side by side: differing params, metrics, evals");
  c.compare_cmd->add_option("RUNS", c.compare_runs, "Two or more run ids or names")
      ->required()
      ->expected(2, 1 << 20);

  auto* exp = c.export_cmd = app.add_subcommand(
      "export",
      "Every metric point and eval of a run, as CSV or JSON Lines (every digit kept) or as a "
      "TensorBoard event file (float32 scalars)");
  exp->add_option("RUN", c.export_args.run, kRunHelp)->required();
  exp->add_option("--format", c.export_args.format,
                  "csv (one header row), jsonl, or tensorboard (needs --out DIR)")
      ->check(CLI::IsMember({"csv", "jsonl", "tensorboard"}))
      ->capture_default_str();
  exp->add_option("--out", c.export_args.out_file,
                  "File to write (default: standard output); for tensorboard, the directory "
                  "that gets events.out.tfevents.<time>.<host>.nmt-tracker");

  auto* table = c.table_cmd =
      app.add_subcommand("table", "A sweep's ablation table (paper Table 3)");
  table->add_option("--sweep", c.sweep, "Sweep name")->required();
  table->add_option("--format", c.format, "md, csv or json")
      ->check(CLI::IsMember({"md", "csv", "json"}))
      ->capture_default_str();
}

void add_write_commands(CLI::App& app, Commands& c) {
  auto* eval = c.eval_cmd = app.add_subcommand("log-eval", "Record an evaluation of a run");
  eval->add_option("RUN", c.eval.run, kRunHelp)->required();
  eval->add_option("--split", c.eval.split, "valid or test")->capture_default_str();
  eval->add_option("--bleu", c.eval.bleu, "BLEU");
  eval->add_option("--chrf", c.eval.chrf, "chrF");
  eval->add_option("--perplexity", c.eval.perplexity, "Perplexity");
  eval->add_option("--signature", c.eval.signature, "sacreBLEU-style signature of the score");
  eval->add_option("--checkpoint", c.eval.checkpoint, "Checkpoint evaluated");
  eval->add_option("--step", c.eval.step, "Training step of the checkpoint");

  c.status_cmd = app.add_subcommand(
      "set-status", "Set a run's status, e.g. for a run that died without reporting it");
  c.status_cmd->add_option("RUN", c.run, kRunHelp)->required();
  c.status_cmd
      ->add_option("STATUS", c.status, "running, finished, failed, killed, preempted or crashed")
      ->required()
      ->check(CLI::IsMember(nmt::tracker::api::run_status_words()));

  c.delete_cmd = app.add_subcommand(
      "delete", "Soft-delete a run: hidden from listings and sweep tables, nothing removed");
  c.delete_cmd->add_option("RUN", c.run, kRunHelp)->required();
  c.restore_cmd = app.add_subcommand("restore", "Undo a delete");
  c.restore_cmd->add_option("RUN", c.run, kRunHelp)->required();

  c.sync_cmd = app.add_subcommand(
      "sync",
      "Upload training runs that never reached the daemon (registration, spooled requests, "
      "metrics.jsonl, artifacts, status); running it again adds nothing");
  c.sync_cmd->add_option("RUN_DIRS", c.sync.run_dirs, "Run directories (with run.json)")
      ->required();
  c.sync_cmd->add_option("--batch-lines", c.sync.batch_lines, "metrics.jsonl lines per request")
      ->capture_default_str();

  c.backup_cmd = app.add_subcommand(
      "backup",
      "Copy the daemon's database while it runs (a consistent snapshot) to OUT, atomically: "
      "written beside OUT, checked with SQLite, then renamed over it");
  c.backup_cmd->add_option("OUT", c.backup.out_file, "The backup file, e.g. tracker-2026-12-07.db")
      ->required();
  c.backup_cmd
      ->add_option("--snapshot-timeout", c.backup.snapshot_timeout_s,
                   "Seconds the daemon may take to make the snapshot before sending it")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

int dispatch(const Commands& c) {
  nmt::tracker::DaemonAddress address;
  try {
    address = nmt::tracker::find_daemon(c.daemon, nmt::process_environment);
  } catch (const nmt::tracker::TrackerUnreachable& e) {
    spdlog::error("{}", e.what());
    return kExitUnreachable;
  } catch (const std::invalid_argument& e) {
    throw nmt::UsageError(e.what());  // nothing says where the daemon is
  }
  try {
    nmt::tracker::TrackerReader reader(address, std::chrono::seconds(c.timeout_s));
    std::ostream& out = std::cout;
    if (*c.runs_cmd) return cli::runs(reader, c.runs, out);
    if (*c.show_cmd) return cli::show(reader, c.run, c.json, out);
    if (*c.metrics_cmd) return cli::metrics(reader, c.metrics, out);
    if (*c.plot_cmd) return cli::plot(reader, c.plot, out);
    if (*c.compare_cmd) return cli::compare(reader, c.compare_runs, out);
    if (*c.eval_cmd) return cli::log_eval(reader, c.eval, out);
    if (*c.status_cmd) return cli::set_status(reader, c.run, c.status, out);
    if (*c.delete_cmd) return cli::delete_run(reader, c.run, out);
    if (*c.restore_cmd) return cli::restore_run(reader, c.run, out);
    if (*c.export_cmd) return cli::export_run(reader, c.export_args, out);
    if (*c.backup_cmd) return cli::backup(reader, c.backup, out);
    if (*c.sync_cmd) {
      nmt::tracker::RunUploader uploader(address, std::chrono::seconds(c.timeout_s));
      return nmt::tracking::sync_runs(reader, uploader, c.sync, out);
    }
    return cli::table(reader, c.sweep, c.format, out);
  } catch (const nmt::tracker::TrackerUnreachable& e) {
    spdlog::error("{}", e.what());
    return kExitUnreachable;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Query nmt-trackerd: runs with their latest metrics and evals, metric series and their "
      "curves (SVG), comparisons of any number of runs, exports (CSV, JSON Lines, TensorBoard), "
      "a sweep's ablation table in the layout of the paper's Table 3, and backups of the "
      "daemon's database while it runs. Runs are named by id or by name.",
      "nmt-tracker"};
  app.footer(
      "The daemon: --url, else --port-file, else the environment variable NMT_TRACKER_URL "
      "(e.g. export NMT_TRACKER_URL=https://login1:6006). Its token: --token-file, else the "
      "file named by NMT_TRACKER_TOKEN_FILE. For https, the CAs that sign its certificate: "
      "--ca-file, else the file named by NMT_TRACKER_CA_FILE, else the system's. A flag beats "
      "the environment.\n"
      "Exit status: 0 done, 1 error (unknown run or metric, refused), 2 bad arguments, 3 daemon "
      "unreachable.");
  app.require_subcommand(1);
  app.fallthrough();
  Commands c;
  nmt::LogOptions log;
  log.tool = "nmt-tracker";
  app.add_option("--url", c.daemon.url,
                 "The daemon, http://HOST:PORT or https://HOST:PORT (or NMT_TRACKER_URL)");
  app.add_option("--port-file", c.daemon.port_file,
                 "The port file nmt-trackerd wrote (host 127.0.0.1)");
  app.add_option("--token-file", c.daemon.token_file,
                 "File holding the bearer token (or NMT_TRACKER_TOKEN_FILE)");
  app.add_option("--ca-file", c.daemon.ca_file,
                 "PEM CA certificates to verify an https daemon (or NMT_TRACKER_CA_FILE; default: "
                 "the system's)");
  app.add_option("--timeout", c.timeout_s, "Seconds to wait for each answer")
      ->capture_default_str();
  nmt::add_logging_flags(app, log);
  add_listing_commands(app, c);
  add_write_commands(app, c);
  return nmt::run_tool(app, log, argc, argv, [&] { return dispatch(c); });
}
