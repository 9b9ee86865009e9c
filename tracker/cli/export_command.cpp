// nmt-tracker export: a run's recorded numbers as a file other tools read: every metric point,
// exactly (read a page at a time, never downsampled), and every eval. CSV is one long table with a
// header row, an eval's figures one row each under the key SPLIT/FIGURE (as GET /api/runs?evals=
// names them); JSON Lines is one object per point and per eval. Numbers keep every digit (the
// shortest text that reads back to the same double). TensorBoard is an event file in a directory
// (tracker/view/tensorboard_events.h): each point a scalar tagged with its key, at its step and
// time; each eval figure a scalar tagged eval/SPLIT/FIGURE at the eval's step (0 without one) and
// the time it was recorded. Its values are float32, the only precision the format has.

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <limits>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <vector>

#include "common/atomic_file.h"
#include "common/cli.h"
#include "tracker/api/wire_json.h"
#include "tracker/cli/commands.h"
#include "tracker/cli/run_ref.h"
#include "tracker/client/tracker_reader.h"
#include "tracker/view/human_format.h"
#include "tracker/view/tensorboard_events.h"

namespace nmt::tracker::cli {
namespace {

// RFC 4180: a field with a comma, quote or line break is quoted, its quotes doubled.
std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

template <class T>
std::string csv_optional(const std::optional<T>& value) {
  return value ? fmt::format("{}", *value) : "";
}

struct Counts {
  std::size_t points = 0, evals = 0;
};

// Every stored point of a series, handed to `visit` a page at a time as the daemon answers
// after_step pages (never downsampled): a long series is never held whole.
template <class Visit>
void for_each_point(TrackerReader& reader, std::int64_t run_id, const std::string& key,
                    Visit&& visit) {
  std::int64_t after = std::numeric_limits<std::int64_t>::min();
  for (;;) {
    // The daemon answers at most its --max-response-points per page, whatever is asked.
    const api::MetricSeries page =
        reader.metric_series(run_id, key, std::nullopt, std::nullopt, after);
    if (page.points.empty()) return;
    for (const api::SeriesPoint& p : page.points) visit(p);
    after = page.points.back().step;
    if (page.last && after >= page.last->step) return;
  }
}

// An eval's figures under the names CSV and GET /api/runs?evals= give them.
std::vector<std::pair<const char*, std::optional<double>>> eval_figures(const api::EvalRecord& r) {
  return {{"bleu", r.bleu}, {"chrf", r.chrf}, {"ppl", r.perplexity}};
}

Counts write_csv(TrackerReader& reader, const api::RunDetail& run, std::ostream& out) {
  Counts counts;
  out << "record,key,step,value,time,rank,eval_id,checkpoint,signature\n";
  for (const auto& key : run.metric_keys) {
    for_each_point(reader, run.summary.run_id, key, [&](const api::SeriesPoint& p) {
      out << fmt::format("metric,{},{},{},{},{},,,\n", csv_field(key), p.step, p.value, p.time,
                         csv_optional(p.rank));
      ++counts.points;
    });
  }
  for (const auto& e : run.evals) {
    const api::EvalRecord& r = e.record;
    for (const auto& [figure, value] : eval_figures(r)) {
      if (!value) continue;
      out << fmt::format("eval,{},{},{},{},,{},{},{}\n", csv_field(r.split + "/" + figure),
                         csv_optional(r.step), *value, e.created_at, e.eval_id,
                         csv_field(r.checkpoint.value_or("")), csv_field(r.signature.value_or("")));
    }
    ++counts.evals;
  }
  return counts;
}

Counts write_jsonl(TrackerReader& reader, const api::RunDetail& run, std::ostream& out) {
  Counts counts;
  for (const auto& key : run.metric_keys) {
    for_each_point(reader, run.summary.run_id, key, [&](const api::SeriesPoint& p) {
      nlohmann::json line = {{"record", "metric"},
                             {"key", key},
                             {"step", p.step},
                             {"value", p.value},
                             {"time", p.time}};
      line["rank"] = p.rank ? nlohmann::json(*p.rank) : nlohmann::json(nullptr);
      out << line.dump() << "\n";
      ++counts.points;
    });
  }
  for (const auto& e : run.evals) {
    nlohmann::json line = {{"record", "eval"}};
    line.update(nlohmann::json(e));
    out << line.dump() << "\n";
    ++counts.evals;
  }
  return counts;
}

// Event files of earlier exports in `dir` (named as EventFileWriter names them) but `kept`:
// TensorBoard reads every file of a directory as one run, so they would show every point twice.
void remove_earlier_exports(const std::string& dir, const std::string& kept) {
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const std::string suffix = ".nmt-tracker";
    if (name.rfind("events.out.tfevents.", 0) != 0 || name.size() <= suffix.size() ||
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0 ||
        entry.path() == std::filesystem::path(kept)) {
      continue;
    }
    std::error_code error;
    std::filesystem::remove(entry.path(), error);
    if (error) {
      throw std::runtime_error(entry.path().string() +
                               ": cannot remove this earlier export: " + error.message());
    }
    std::cerr << fmt::format("removed the earlier export {}\n", entry.path().string());
  }
}

// Returns the file written.
std::string write_tensorboard(TrackerReader& reader, const api::RunDetail& run,
                              const std::string& dir, Counts& counts) {
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  tensorboard::EventFileWriter writer(dir, now, tensorboard::local_host_name());
  for (const auto& key : run.metric_keys) {
    for_each_point(reader, run.summary.run_id, key, [&](const api::SeriesPoint& p) {
      writer.write_scalar(p.time, p.step, key, p.value);
      ++counts.points;
    });
  }
  for (const auto& e : run.evals) {
    const api::EvalRecord& r = e.record;
    for (const auto& [figure, value] : eval_figures(r)) {
      if (value) {
        writer.write_scalar(e.created_at, r.step.value_or(0), "eval/" + r.split + "/" + figure,
                            *value);
      }
    }
    ++counts.evals;
  }
  writer.commit();
  remove_earlier_exports(dir, writer.path());
  return writer.path();
}

}  // namespace

int export_run(TrackerReader& reader, const ExportArgs& args, std::ostream& out) {
  if (args.format != "csv" && args.format != "jsonl" && args.format != "tensorboard") {
    throw nmt::UsageError("--format must be csv, jsonl or tensorboard, not '" + args.format + "'");
  }
  const bool to_stdout = args.out_file.empty() || args.out_file == "-";
  if (args.format == "tensorboard" && to_stdout) {
    throw nmt::UsageError("--format tensorboard writes a directory: give it with --out DIR");
  }
  const api::RunDetail run =
      reader.get_run(resolve_run(reader, args.run, /*include_deleted=*/true));
  if (args.format == "tensorboard") {
    Counts counts;
    const std::string path = write_tensorboard(reader, run, args.out_file, counts);
    std::cerr << fmt::format(
        "wrote {} (run {}: {}, {}); view it with  tensorboard --logdir {}\n", path,
        run.summary.run_id,
        format_quantity(static_cast<std::int64_t>(counts.points), "metric point"),
        format_quantity(static_cast<std::int64_t>(counts.evals), "eval"), args.out_file);
    return 0;
  }
  std::ostringstream text;
  const Counts counts =
      args.format == "csv" ? write_csv(reader, run, text) : write_jsonl(reader, run, text);
  if (to_stdout) {
    out << text.str();
  } else {
    write_file_atomically(args.out_file, text.str());
    std::cerr << fmt::format(
        "wrote {} (run {}: {}, {})\n", args.out_file, run.summary.run_id,
        format_quantity(static_cast<std::int64_t>(counts.points), "metric point"),
        format_quantity(static_cast<std::int64_t>(counts.evals), "eval"));
  }
  return 0;
}

}  // namespace nmt::tracker::cli
