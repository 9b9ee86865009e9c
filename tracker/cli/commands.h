#pragma once
// The subcommands of nmt-tracker (apps/nmt_tracker.cpp parses their flags): listings and one run
// (run_commands.cpp), metric series as numbers or an SVG chart (series_commands.cpp), N runs side
// by side (compare_command.cpp), a sweep's Table 3 and the writes people make by hand
// (write_commands.cpp), a backup of the daemon's database (backup_command.cpp). Each talks to the
// daemon through the typed read client and prints to `out`; everything printed for people passes
// through printable() (names come from whoever wrote to the daemon), numbers and times through
// human_format.h. --json prints the answer's wire JSON.
//
// Errors: nmt::UsageError for arguments that are wrong in form (exit 2), std::runtime_error for
// arguments the daemon's data contradicts (an unknown run name, a metric key the run lacks, with
// what there is instead; exit 1), TrackerUnreachable when the daemon does not answer (exit 3).

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace nmt::tracker {
class TrackerReader;
class RunUploader;
}  // namespace nmt::tracker

namespace nmt::tracker::cli {

// `runs`: a listing, filtered, with optional metric, eval and param columns, sorted.
struct RunsArgs {
  std::string experiment, sweep, status, uid, name;
  std::vector<std::string> params;          // key=value filters
  std::vector<std::string> metric_columns;  // last value of each, as a column ("*": every key)
  // Latest eval figure of each SPLIT/FIGURE (bleu, chrf, ppl) as a column ("*": every one);
  // empty: every figure some listed run has.
  std::vector<std::string> eval_columns;
  std::vector<std::string> param_columns;  // each param, as a column ("*": every param)
  std::string sort;      // [-]field, [-]metric:KEY, [-]eval:SPLIT/FIGURE or [-]param:KEY
  bool deleted = false;  // list soft-deleted runs instead
  bool json = false;
};
int runs(TrackerReader& reader, const RunsArgs& args, std::ostream& out);

// `show RUN`: provenance, attempts, params, evals, artifacts, metric keys with their last values.
int show(TrackerReader& reader, const std::string& run, bool json, std::ostream& out);

// `metrics RUN KEY`: one series as a table or CSV.
struct MetricsArgs {
  std::string run, key;
  bool csv = false, json = false;
  std::optional<std::int64_t> max_points, rank;
};
int metrics(TrackerReader& reader, const MetricsArgs& args, std::ostream& out);

// `plot RUN [RUN...] --metric KEY`: the runs' curves overlaid, as an SVG document, written to
// `out_file` atomically (or to `out` when it is empty or "-").
struct PlotArgs {
  std::vector<std::string> runs;
  std::string metric;
  std::string out_file;
  std::string x_axis = "step";  // step or time
  bool log_y = false;
  int width = 800, height = 450;
  std::int64_t max_points = 2000;  // asked of the daemon per series
};
int plot(TrackerReader& reader, const PlotArgs& args, std::ostream& out);

// `compare RUN RUN [RUN...]`: params that differ, last metric values, the latest eval figure per
// split (SPLIT/bleu, SPLIT/chrf, SPLIT/ppl), and each run's eval history by split and step.
int compare(TrackerReader& reader, const std::vector<std::string>& runs, std::ostream& out);

// `export RUN`: every metric point (key, step, value, time, rank) and every eval, as CSV (one
// header row; a `record` column tells metrics from evals) or JSON Lines (one object per line),
// written to `out_file` atomically (or to `out` when it is empty or "-"); or, as tensorboard, a
// TensorBoard event file of scalars written atomically into the directory `out_file` (required).
struct ExportArgs {
  std::string run;
  std::string format = "csv";  // csv, jsonl or tensorboard
  std::string out_file;        // a file; for tensorboard, a directory
};
int export_run(TrackerReader& reader, const ExportArgs& args, std::ostream& out);

// `table --sweep NAME`: the sweep's table in the paper's Table 3 layout.
int table(TrackerReader& reader, const std::string& sweep, const std::string& format,
          std::ostream& out);

// `log-eval RUN`: records an evaluation (scripts: the quickstart, nmt-sweep).
struct EvalArgs {
  std::string run;
  std::string split = "test", checkpoint, signature;
  std::optional<std::int64_t> step;
  std::optional<double> bleu, chrf, perplexity;
};
int log_eval(TrackerReader& reader, const EvalArgs& args, std::ostream& out);

// `set-status RUN STATUS`: for a run whose process died unseen and would show "running" for ever.
int set_status(TrackerReader& reader, const std::string& run, const std::string& status,
               std::ostream& out);

// `delete RUN` (soft: hidden from listings and tables, nothing removed) and `restore RUN`.
int delete_run(TrackerReader& reader, const std::string& run, std::ostream& out);
int restore_run(TrackerReader& reader, const std::string& run, std::ostream& out);

// `backup OUT`: a consistent snapshot of the daemon's database, taken while it runs, written to
// OUT atomically once checked (backup_command.cpp); prints the path, size, run count, schema
// version and time taken.
struct BackupArgs {
  std::string out_file;
  int snapshot_timeout_s = 3600;  // for the daemon to make the snapshot, before the first byte
};
int backup(TrackerReader& reader, const BackupArgs& args, std::ostream& out);

}  // namespace nmt::tracker::cli
