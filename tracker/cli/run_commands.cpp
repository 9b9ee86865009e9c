// nmt-tracker runs and show: the listing (filters, metric and param columns, sort) and one run.

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <ostream>
#include <set>

#include "common/cli.h"
#include "tracker/api/wire_json.h"
#include "tracker/cli/cell_text.h"
#include "tracker/cli/commands.h"
#include "tracker/cli/run_ref.h"
#include "tracker/client/tracker_reader.h"
#include "tracker/view/human_format.h"
#include "tracker/view/table_format.h"

namespace nmt::tracker::cli {
namespace {

using Table = std::vector<std::vector<std::string>>;

// "a,b" and repeated flags alike; "*" alone selects every key.
std::optional<api::KeySelection> selection(const std::vector<std::string>& flags) {
  if (flags.empty()) return std::nullopt;
  api::KeySelection out;
  for (const auto& flag : flags) {
    std::size_t start = 0;
    while (start <= flag.size()) {
      const std::size_t comma = std::min(flag.find(',', start), flag.size());
      const std::string key = flag.substr(start, comma - start);
      if (key == "*") {
        out.all = true;
      } else if (!key.empty()) {
        out.keys.push_back(key);
      }
      start = comma + 1;
    }
  }
  if (!out.all && out.keys.empty()) throw nmt::UsageError("a column list names no key");
  return out;
}

api::RunQuery query_of(const RunsArgs& args) {
  api::RunQuery query;
  const auto set = [](std::optional<std::string>& field, const std::string& value) {
    if (!value.empty()) field = value;
  };
  set(query.experiment, args.experiment);
  set(query.sweep, args.sweep);
  set(query.status, args.status);
  set(query.uid, args.uid);
  set(query.name, args.name);
  for (const auto& p : args.params) {
    const auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw nmt::UsageError("--param wants key=value, got '" + printable(p) + "'");
    }
    query.params[p.substr(0, eq)] = p.substr(eq + 1);
  }
  query.metrics = selection(args.metric_columns);
  // Always asked for: without --evals the columns are the figures the listed runs have.
  query.evals =
      args.eval_columns.empty() ? api::KeySelection{true, {}} : *selection(args.eval_columns);
  for (const auto& key : query.evals->keys) {
    if (!api::is_valid_eval_key(key)) {
      throw nmt::UsageError("--evals: '" + printable(key) +
                            "' is not SPLIT/FIGURE with FIGURE bleu, chrf or ppl (e.g. test/bleu)");
    }
  }
  query.show_params = selection(args.param_columns);
  if (!args.sort.empty()) {
    try {
      query.sort = api::run_query_from({{"sort", args.sort}}).sort;
    } catch (const nmt::FieldError& e) {
      throw nmt::UsageError(std::string("--sort: ") + e.what());
    }
  }
  if (args.deleted) query.deleted = api::DeletedRuns::kOnly;
  return query;
}

// The keys of the columns to show: those asked for, or with "*" every key some run has.
template <class Map>
std::vector<std::string> column_keys(const std::optional<api::KeySelection>& selection,
                                     const std::vector<api::RunSummary>& runs,
                                     const std::optional<Map> api::RunSummary::*member) {
  if (!selection) return {};
  if (!selection->all) return selection->keys;
  std::set<std::string> keys;
  for (const auto& run : runs) {
    if (!(run.*member)) continue;
    for (const auto& entry : *(run.*member)) keys.insert(entry.first);
  }
  return {keys.begin(), keys.end()};
}

}  // namespace

int runs(TrackerReader& reader, const RunsArgs& args, std::ostream& out) {
  const api::RunQuery query = query_of(args);
  const auto list = reader.list_runs(query);
  if (args.json) {
    out << nlohmann::json(api::RunList{list}).dump(2) << "\n";
    return 0;
  }
  const auto param_keys = column_keys(query.show_params, list, &api::RunSummary::params);
  const auto metric_keys = column_keys(query.metrics, list, &api::RunSummary::last_metrics);
  const auto eval_keys = column_keys(query.evals, list, &api::RunSummary::last_evals);
  std::vector<std::string> header = {"id",    "experiment", "name", "sweep",   "row",     "status",
                                     "tries", "ranks",      "host", "started", "duration"};
  for (const auto& key : param_keys) header.push_back(key);
  for (const auto& key : metric_keys) header.push_back(key);
  for (const auto& key : eval_keys) header.push_back(key);
  Table rows;
  for (const auto& run : list) {
    std::vector<std::string> row = {
        std::to_string(run.run_id),   printable(run.experiment),      printable(run.name),
        text_cell(run.sweep),         text_cell(run.row_label),       run.status,
        std::to_string(run.attempts), count_cell(run.world_size),     text_cell(run.host),
        time_cell(run.started_at),    format_duration(run.duration_s)};
    for (const auto& key : param_keys) {
      const auto it = run.params ? run.params->find(key) : api::Params::const_iterator{};
      row.push_back(run.params && it != run.params->end() ? param_cell(it->second) : "-");
    }
    const auto figure = [](const std::optional<std::map<std::string, double>>& values,
                           const std::string& key) -> std::optional<double> {
      if (!values) return std::nullopt;
      const auto it = values->find(key);
      return it == values->end() ? std::nullopt : std::optional<double>(it->second);
    };
    for (const auto& key : metric_keys) row.push_back(figure_cell(figure(run.last_metrics, key)));
    for (const auto& key : eval_keys) row.push_back(figure_cell(figure(run.last_evals, key)));
    rows.push_back(std::move(row));
  }
  out << render_text_table(header, rows);
  if (list.empty()) out << "(no runs match)\n";
  return 0;
}

namespace {

// The newest attempt's provenance whole, then what each earlier attempt had otherwise.
void print_provenance(const std::vector<api::Attempt>& attempts, std::ostream& out) {
  const api::Attempt* newest = nullptr;
  for (const auto& a : attempts) {
    if (!a.provenance.empty()) newest = &a;
  }
  if (newest == nullptr) return;
  out << fmt::format("\nprovenance (attempt {})\n", newest->attempt);
  for (const auto& [key, value] : newest->provenance) {
    out << fmt::format("  {} = {}\n", printable(key), param_cell(value));
  }
  for (const auto& a : attempts) {
    if (&a == newest) continue;
    for (const auto& [key, value] : a.provenance) {
      const auto now = newest->provenance.find(key);
      if (now == newest->provenance.end() || now->second != value) {
        out << fmt::format("  attempt {}: {} = {}\n", a.attempt, printable(key), param_cell(value));
      }
    }
  }
}

}  // namespace

int show(TrackerReader& reader, const std::string& ref, bool json, std::ostream& out) {
  const api::RunDetail run = reader.get_run(resolve_run(reader, ref, /*include_deleted=*/true));
  if (json) {
    out << nlohmann::json(run).dump(2) << "\n";
    return 0;
  }
  const api::RunSummary& s = run.summary;
  const std::vector<std::pair<std::string, std::string>> fields = {
      {"run_id", std::to_string(s.run_id)},
      {"uid", text_cell(s.uid)},
      {"experiment", printable(s.experiment)},
      {"name", printable(s.name)},
      {"sweep", text_cell(s.sweep)},
      {"row_label", text_cell(s.row_label)},
      {"row_index", count_cell(s.row_index)},
      {"status", s.status + (s.deleted_at ? " (deleted " + time_cell(s.deleted_at) + ")" : "")},
      {"attempt", fmt::format("{} of {}", s.attempt, s.attempts)},
      {"config_hash", text_cell(s.config_hash)},
      {"git_revision", text_cell(s.git_revision)},
      {"host", text_cell(s.host)},
      {"world_size", count_cell(s.world_size)},
      {"slurm_job_id", text_cell(s.slurm_job_id)},
      {"slurm_array_id", text_cell(s.slurm_array_id)},
      {"started_at", time_cell(s.started_at)},
      {"ended_at", time_cell(s.ended_at)},
      {"duration", format_duration(s.duration_s)},
  };
  for (const auto& [key, value] : fields) out << fmt::format("{:<16}{}\n", key, value);

  out << "\nattempts\n";
  Table attempts;
  for (const auto& a : run.attempts) {
    attempts.push_back({std::to_string(a.attempt), a.status, text_cell(a.host),
                        count_cell(a.world_size), text_cell(a.slurm_job_id),
                        text_cell(a.slurm_array_id), time_cell(a.started_at), time_cell(a.ended_at),
                        time_cell(a.last_contact_at), text_cell(a.run_dir)});
  }
  out << render_text_table({"attempt", "status", "host", "world_size", "slurm_job_id",
                            "slurm_array_id", "started", "ended", "last_contact", "run_dir"},
                           attempts);
  print_provenance(run.attempts, out);
  out << "\nparams\n";
  for (const auto& [key, value] : run.params) {
    out << fmt::format("  {} = {}\n", printable(key), param_cell(value));
  }
  out << "\nevals\n";
  Table evals;
  for (const auto& e : run.evals) {
    const api::EvalRecord& r = e.record;
    evals.push_back({printable(r.split), count_cell(r.step), text_cell(r.checkpoint),
                     figure_cell(r.bleu), figure_cell(r.chrf), figure_cell(r.perplexity),
                     text_cell(r.signature)});
  }
  out << render_text_table(
      {"split", "step", "checkpoint", "bleu", "chrf", "perplexity", "signature"}, evals);
  out << "\nartifacts\n";
  Table artifacts;
  for (const auto& a : run.artifacts) {
    artifacts.push_back({printable(a.record.kind), printable(a.record.path),
                         count_cell(a.record.step), count_cell(a.record.averaged_from),
                         a.has_content ? "kept" : "-"});
  }
  out << render_text_table({"kind", "path", "step", "averaged_from", "text"}, artifacts);
  out << "\nmetrics (last point)\n";
  Table metrics;
  for (const auto& key : run.metric_keys) {
    const auto series = reader.metric_series(s.run_id, key, 2);
    std::vector<std::string> row = {printable(key), format_count(series.total_points)};
    if (series.last) {
      row.insert(row.end(), {std::to_string(series.last->step),
                             format_number(series.last->value, 6), time_cell(series.last->time)});
    }
    metrics.push_back(std::move(row));
  }
  out << render_text_table({"key", "points", "step", "value", "time"}, metrics);
  if (run.config) {
    out << fmt::format(
        "\nconfig: {} (show {} --json, or the dashboard)\n",
        format_quantity(std::count(run.config->begin(), run.config->end(), '\n'), "line"),
        s.run_id);
  }
  return 0;
}

}  // namespace nmt::tracker::cli
