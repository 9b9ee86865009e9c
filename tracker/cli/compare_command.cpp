// nmt-tracker compare: any number of runs side by side, one column per run: the params that
// differ, every metric's last value, and the latest eval of each split (as GET /api/runs?evals=
// chooses it); then every eval of the runs, by run, split and step.

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <ostream>
#include <set>
#include <tuple>

#include "common/cli.h"
#include "tracker/cli/cell_text.h"
#include "tracker/cli/commands.h"
#include "tracker/cli/run_ref.h"
#include "tracker/client/tracker_reader.h"
#include "tracker/view/human_format.h"
#include "tracker/view/table_format.h"

namespace nmt::tracker::cli {
namespace {

using Table = std::vector<std::vector<std::string>>;

// The latest eval of each split: newest created_at, then highest eval_id.
std::map<std::string, api::Eval> latest_evals(const api::RunDetail& run) {
  std::map<std::string, api::Eval> latest;
  for (const auto& eval : run.evals) {
    const auto it = latest.find(eval.record.split);
    if (it == latest.end() || std::tie(eval.created_at, eval.eval_id) >
                                  std::tie(it->second.created_at, it->second.eval_id)) {
      latest[eval.record.split] = eval;
    }
  }
  return latest;
}

// Every eval of the runs, one row each: by run, split, step (evals without one first), id.
Table eval_history(const std::vector<api::RunDetail>& runs) {
  Table rows;
  for (const auto& run : runs) {
    std::vector<api::Eval> evals = run.evals;
    std::stable_sort(evals.begin(), evals.end(), [](const api::Eval& a, const api::Eval& b) {
      return std::tie(a.record.split, a.record.step, a.eval_id) <
             std::tie(b.record.split, b.record.step, b.eval_id);
    });
    for (const auto& e : evals) {
      const api::EvalRecord& r = e.record;
      rows.push_back({std::to_string(run.summary.run_id), printable(r.split), count_cell(r.step),
                      text_cell(r.checkpoint), figure_cell(r.bleu), figure_cell(r.chrf),
                      figure_cell(r.perplexity)});
    }
  }
  return rows;
}

// One row per key of any run; `only_differences` keeps the rows whose cells are not all equal.
Table side_by_side(const std::vector<std::map<std::string, std::string>>& columns,
                   bool only_differences) {
  std::set<std::string> keys;
  for (const auto& column : columns) {
    for (const auto& entry : column) keys.insert(entry.first);
  }
  Table rows;
  for (const auto& key : keys) {
    std::vector<std::string> row = {printable(key)};
    std::set<std::string> distinct;
    for (const auto& column : columns) {
      const auto it = column.find(key);
      row.push_back(it == column.end() ? "-" : it->second);
      distinct.insert(row.back());
    }
    if (!only_differences || distinct.size() > 1) rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

int compare(TrackerReader& reader, const std::vector<std::string>& refs, std::ostream& out) {
  if (refs.size() < 2) throw nmt::UsageError("compare wants two runs or more");
  std::vector<api::RunDetail> runs;
  std::vector<std::string> header = {""};
  for (const auto& ref : refs) {
    runs.push_back(reader.get_run(resolve_run(reader, ref, /*include_deleted=*/true)));
    header.push_back("run " + std::to_string(runs.back().summary.run_id));
  }
  for (const auto& run : runs) {
    out << fmt::format("run {}: {}/{} ({})\n", run.summary.run_id,
                       printable(run.summary.experiment), printable(run.summary.name),
                       run.summary.status);
  }
  std::vector<std::map<std::string, std::string>> params, metrics, evals;
  for (const auto& run : runs) {
    auto& p = params.emplace_back();
    for (const auto& [key, value] : run.params) p[key] = param_cell(value);
    auto& m = metrics.emplace_back();
    for (const auto& key : run.metric_keys) {
      // The daemon's "last" is the newest point exactly, also for a long series.
      const auto series = reader.metric_series(run.summary.run_id, key, 2);
      m[key] = series.last ? format_number(series.last->value, 6) : "-";
    }
    auto& e = evals.emplace_back();
    for (const auto& [split, eval] : latest_evals(run)) {
      const api::EvalRecord& record = eval.record;
      e[split + "/step"] = count_cell(record.step);
      if (record.bleu) e[split + "/bleu"] = figure_cell(record.bleu);
      if (record.chrf) e[split + "/chrf"] = figure_cell(record.chrf);
      if (record.perplexity) e[split + "/ppl"] = figure_cell(record.perplexity);
    }
  }
  header[0] = "param";
  out << "\nparams that differ\n" << render_text_table(header, side_by_side(params, true));
  header[0] = "metric";
  out << "\nmetrics (latest value)\n" << render_text_table(header, side_by_side(metrics, false));
  header[0] = "eval";
  out << "\nevals (latest per split)\n" << render_text_table(header, side_by_side(evals, false));
  out << "\neval history\n"
      << render_text_table({"run", "split", "step", "checkpoint", "bleu", "chrf", "ppl"},
                           eval_history(runs));
  return 0;
}

}  // namespace nmt::tracker::cli
