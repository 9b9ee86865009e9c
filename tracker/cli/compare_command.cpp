// nmt-tracker compare: any number of runs side by side, one column per run: the params that
// differ, every metric's last value, and the newest eval of each split.

#include <fmt/format.h>

#include <map>
#include <ostream>
#include <set>

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

// The newest eval of each split: highest step, the later one on a tie; an eval without a step
// ranks below every step.
std::map<std::string, api::EvalRecord> newest_evals(const api::RunDetail& run) {
  const auto step = [](const api::EvalRecord& e) { return e.step.value_or(-1); };
  std::map<std::string, api::EvalRecord> newest;
  for (const auto& eval : run.evals) {
    const auto it = newest.find(eval.record.split);
    if (it == newest.end() || step(eval.record) >= step(it->second)) {
      newest[eval.record.split] = eval.record;
    }
  }
  return newest;
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
    for (const auto& [split, record] : newest_evals(run)) {
      e[split + " step"] = count_cell(record.step);
      e[split + " bleu"] = figure_cell(record.bleu);
      e[split + " chrf"] = figure_cell(record.chrf);
      e[split + " perplexity"] = figure_cell(record.perplexity);
    }
  }
  header[0] = "param";
  out << "\nparams that differ\n" << render_text_table(header, side_by_side(params, true));
  header[0] = "metric";
  out << "\nmetrics (latest value)\n" << render_text_table(header, side_by_side(metrics, false));
  header[0] = "eval";
  out << "\nevals (newest per split)\n" << render_text_table(header, side_by_side(evals, false));
  return 0;
}

}  // namespace nmt::tracker::cli
