// nmt-tracker export: a run's recorded numbers as a file other tools read: every metric point,
// exactly (read a page at a time, never downsampled), and every eval. CSV is one long table with a
// header row, an eval's figures one row each under the key SPLIT/FIGURE (as GET /api/runs?evals=
// names them); JSON Lines is one object per point and per eval. Numbers keep every digit (the
// shortest text that reads back to the same double).

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <iostream>
#include <ostream>
#include <sstream>

#include "common/atomic_file.h"
#include "common/cli.h"
#include "tracker/api/wire_json.h"
#include "tracker/cli/commands.h"
#include "tracker/cli/run_ref.h"
#include "tracker/client/tracker_reader.h"
#include "tracker/view/human_format.h"

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

Counts write_csv(TrackerReader& reader, const api::RunDetail& run, std::ostream& out) {
  Counts counts;
  out << "record,key,step,value,time,rank,eval_id,checkpoint,signature\n";
  for (const auto& key : run.metric_keys) {
    for (const auto& p : reader.all_points(run.summary.run_id, key)) {
      out << fmt::format("metric,{},{},{},{},{},,,\n", csv_field(key), p.step, p.value, p.time,
                         csv_optional(p.rank));
      ++counts.points;
    }
  }
  for (const auto& e : run.evals) {
    const api::EvalRecord& r = e.record;
    const std::pair<const char*, std::optional<double>> figures[] = {
        {"bleu", r.bleu}, {"chrf", r.chrf}, {"ppl", r.perplexity}};
    for (const auto& [figure, value] : figures) {
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
    for (const auto& p : reader.all_points(run.summary.run_id, key)) {
      nlohmann::json line = {{"record", "metric"},
                             {"key", key},
                             {"step", p.step},
                             {"value", p.value},
                             {"time", p.time}};
      line["rank"] = p.rank ? nlohmann::json(*p.rank) : nlohmann::json(nullptr);
      out << line.dump() << "\n";
      ++counts.points;
    }
  }
  for (const auto& e : run.evals) {
    nlohmann::json line = {{"record", "eval"}};
    line.update(nlohmann::json(e));
    out << line.dump() << "\n";
    ++counts.evals;
  }
  return counts;
}

}  // namespace

int export_run(TrackerReader& reader, const ExportArgs& args, std::ostream& out) {
  if (args.format != "csv" && args.format != "jsonl") {
    throw nmt::UsageError("--format must be csv or jsonl, not '" + args.format + "'");
  }
  const api::RunDetail run =
      reader.get_run(resolve_run(reader, args.run, /*include_deleted=*/true));
  std::ostringstream text;
  const Counts counts =
      args.format == "csv" ? write_csv(reader, run, text) : write_jsonl(reader, run, text);
  if (args.out_file.empty() || args.out_file == "-") {
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
