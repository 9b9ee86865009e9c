// nmt-tracker metrics and plot: one series as numbers, or the curves of several runs as SVG.

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <iostream>
#include <ostream>

#include "common/atomic_file.h"
#include "common/cli.h"
#include "tracker/api/wire_json.h"
#include "tracker/cli/cell_text.h"
#include "tracker/cli/commands.h"
#include "tracker/cli/run_ref.h"
#include "tracker/client/tracker_reader.h"
#include "tracker/view/human_format.h"
#include "tracker/view/svg_plot.h"
#include "tracker/view/table_format.h"

namespace nmt::tracker::cli {
namespace {

// The run, after checking that it has the metric `key`; an error listing its keys otherwise.
api::RunDetail run_with_metric(TrackerReader& reader, const std::string& ref,
                               const std::string& key) {
  api::RunDetail run = reader.get_run(resolve_run(reader, ref, /*include_deleted=*/true));
  const auto& keys = run.metric_keys;
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
    std::vector<std::string> listed;
    for (const auto& k : keys) listed.push_back(printable(k));
    throw std::runtime_error(
        keys.empty()
            ? fmt::format("run {} ({}) has no metrics yet, so no '{}'", run.summary.run_id,
                          printable(run.summary.name), printable(key))
            : fmt::format("run {} ({}) has no metric '{}'; its keys: {}", run.summary.run_id,
                          printable(run.summary.name), printable(key), fmt::join(listed, ", ")));
  }
  return run;
}

// CSV keeps every digit (it is read by programs); the table is for people.
std::string exact(double value) {
  return fmt::format("{}", value);
}

}  // namespace

int metrics(TrackerReader& reader, const MetricsArgs& args, std::ostream& out) {
  if (args.max_points && *args.max_points < 1) throw nmt::UsageError("--max-points must be >= 1");
  const api::RunDetail run = run_with_metric(reader, args.run, args.key);
  const api::MetricSeries series =
      reader.metric_series(run.summary.run_id, args.key, args.max_points, args.rank);
  if (args.json) {
    out << nlohmann::json(series).dump(2) << "\n";
    return 0;
  }
  if (series.downsampled) {
    // On stderr, so that the CSV on stdout stays one table.
    std::cerr << fmt::format(
        "{} points, downsampled to {} buckets by step (mean value, with min and max); the daemon "
        "answers at most its --max-response-points; --rank R or --json for one rank's series\n",
        format_count(series.total_points),
        format_count(static_cast<std::int64_t>(series.points.size())));
  }
  if (args.csv) {
    out << "step,value,min,max,rank,time\n";
    for (const auto& p : series.points) {
      out << fmt::format("{},{},{},{},{},{}\n", p.step, exact(p.value),
                         series.downsampled ? exact(p.min) : "",
                         series.downsampled ? exact(p.max) : "",
                         p.rank ? std::to_string(*p.rank) : "", exact(p.time));
    }
    return 0;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& p : series.points) {
    rows.push_back({std::to_string(p.step), format_number(p.value, 6),
                    series.downsampled ? format_number(p.min, 6) : "-",
                    series.downsampled ? format_number(p.max, 6) : "-", count_cell(p.rank),
                    time_cell(p.time)});
  }
  out << render_text_table({"step", "value", "min", "max", "rank", "time"}, rows);
  return 0;
}

int plot(TrackerReader& reader, const PlotArgs& args, std::ostream& out) {
  PlotOptions options;
  if (args.x_axis == "step") {
    options.x_axis = PlotXAxis::kStep;
  } else if (args.x_axis == "time") {
    options.x_axis = PlotXAxis::kSeconds;
  } else {
    throw nmt::UsageError("--x wants step or time, not '" + printable(args.x_axis) + "'");
  }
  if (args.max_points < 2) throw nmt::UsageError("--max-points must be >= 2");
  options.title = args.metric;
  options.y_label = args.metric;
  options.log_y = args.log_y;
  options.width = args.width;
  options.height = args.height;
  try {
    options.validate();
  } catch (const std::invalid_argument& e) {
    throw nmt::UsageError(e.what());
  }
  // The runs first (each must have the metric), then all their series in one request (a key
  // holding a comma, which no key list can name, one request per run).
  std::vector<api::RunDetail> runs;
  api::SeriesQuery query;
  query.keys.keys = {args.metric};
  query.max_points = args.max_points;
  for (const auto& ref : args.runs) {
    runs.push_back(run_with_metric(reader, ref, args.metric));
    query.runs.push_back(runs.back().summary.run_id);
  }
  const bool listable = args.metric.find(',') == std::string::npos;
  const api::SeriesList answers = listable ? reader.series_of_runs(query) : api::SeriesList{};
  const auto series_of = [&](std::int64_t run_id) {
    for (const api::RunSeries& s : answers.series) {
      if (s.run_id == run_id && s.series.key == args.metric) return s.series;
    }
    return reader.metric_series(run_id, args.metric, args.max_points);
  };
  std::vector<PlotSeries> series;
  for (const api::RunDetail& run : runs) {
    const api::MetricSeries answer = series_of(run.summary.run_id);
    PlotSeries curve;
    curve.label = fmt::format("{} ({})", run.summary.name, run.summary.run_id);
    for (const auto& p : answer.points) {
      PlotPoint point;
      point.x = options.x_axis == PlotXAxis::kStep ? static_cast<double>(p.step)
                                                   : p.time - run.summary.started_at;
      point.y = p.value;
      if (answer.downsampled) {
        point.min = p.min;
        point.max = p.max;
      }
      curve.points.push_back(point);
    }
    series.push_back(std::move(curve));
  }
  const std::string svg = render_svg_plot(options, series);
  if (args.out_file.empty() || args.out_file == "-") {
    out << svg;
  } else {
    write_file_atomically(args.out_file, svg);
    std::cerr << fmt::format("wrote {} ({}, metric {})\n", args.out_file,
                             format_quantity(static_cast<std::int64_t>(series.size()), "run"),
                             printable(args.metric));
  }
  return 0;
}

}  // namespace nmt::tracker::cli
