// nmt-tracker table, and the writes people and scripts make by hand: log-eval, set-status,
// delete (soft) and restore.

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <ostream>

#include "tracker/api/wire_json.h"
#include "tracker/cli/commands.h"
#include "tracker/cli/run_ref.h"
#include "tracker/client/tracker_reader.h"
#include "tracker/view/table_format.h"

namespace nmt::tracker::cli {

int table(TrackerReader& reader, const std::string& sweep, const std::string& format,
          std::ostream& out) {
  const TableFormat table_format = parse_table_format(format);
  nlohmann::json table = reader.sweep_table(sweep);
  if (table_format != TableFormat::kJson) {
    // The text layouts key cells by column name, and know the paper's reference figures as
    // ref_ppl, ref_bleu, ref_params (the daemon's reference.ppl, ...).
    nlohmann::json names = nlohmann::json::array();
    for (const auto& column : table.at("columns")) {
      std::string name = column.at("name").get<std::string>();
      if (column.at("kind") == "reference" && name.rfind("reference.", 0) == 0) {
        const std::string short_name = "ref_" + name.substr(10);
        for (auto& row : table.at("rows")) {
          nlohmann::json& values = row.at("values");
          values[short_name] = values.value(name, nlohmann::json());
        }
        name = short_name;
      }
      names.push_back(name);
    }
    table["columns"] = std::move(names);
  }
  out << render_sweep_table(table, table_format);
  return 0;
}

int log_eval(TrackerReader& reader, const EvalArgs& args, std::ostream& out) {
  api::EvalRecord record;
  record.split = args.split;
  record.step = args.step;
  if (!args.checkpoint.empty()) record.checkpoint = args.checkpoint;
  if (!args.signature.empty()) record.signature = args.signature;
  record.bleu = args.bleu;
  record.chrf = args.chrf;
  record.perplexity = args.perplexity;
  const api::EvalCreated created = reader.log_eval(resolve_run(reader, args.run), record);
  out << nlohmann::json(created).dump() << "\n";
  return 0;
}

int set_status(TrackerReader& reader, const std::string& run, const std::string& status,
               std::ostream& out) {
  const api::StatusAnswer answer = reader.set_status(resolve_run(reader, run), status);
  out << fmt::format("run {}: {}\n", answer.run_id, answer.status);
  return 0;
}

int delete_run(TrackerReader& reader, const std::string& run, std::ostream& out) {
  const api::DeleteAnswer answer = reader.delete_run(resolve_run(reader, run));
  out << fmt::format(
      "run {}: deleted (hidden from listings and sweep tables; nothing removed; "
      "nmt-tracker restore {} brings it back)\n",
      answer.run_id, answer.run_id);
  return 0;
}

int restore_run(TrackerReader& reader, const std::string& run, std::ostream& out) {
  const api::DeleteAnswer answer =
      reader.restore_run(resolve_run(reader, run, /*include_deleted=*/true));
  out << fmt::format("run {}: restored\n", answer.run_id);
  return 0;
}

}  // namespace nmt::tracker::cli
