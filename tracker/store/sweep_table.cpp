// RunStore::sweep_table: the rows of one sweep in the layout of the paper's Table 3. Columns are
// the architecture knobs that vary between rows (all of them for a one-row sweep), then the
// figures: parameter count, dev perplexity and BLEU, test BLEU and reference figures when present.

#include <fmt/format.h>

#include "tracker/store/run_store.h"
#include "tracker/store/sql_rows.h"

namespace nmt::tracker {

using nlohmann::json;

namespace {

// The architecture knobs of the paper's Table 3, in its column order.
const std::vector<std::string>& table_param_keys() {
  static const std::vector<std::string> kKeys = {
      "model.layers",    "model.d_model",  "model.d_ff",    "model.heads",
      "model.d_k",       "model.d_v",      "model.dropout", "train.label_smoothing",
      "model.positions", "train.max_steps"};
  return kKeys;
}

struct TableRow {
  json head;    // run_id, name, row_label, row_index, status
  json values;  // every candidate column; the table keeps the chosen ones
  bool has_test = false;
};

json param_or_null(const json& params, const char* key) {
  const auto it = params.find(key);
  return it == params.end() ? json(nullptr) : *it;
}

bool varies(const std::vector<TableRow>& rows, const std::string& column) {
  for (const TableRow& row : rows) {
    if (row.values[column] != rows.front().values[column]) {
      return true;
    }
  }
  return false;
}

std::vector<std::string> table_columns(const std::vector<TableRow>& rows) {
  std::vector<std::string> columns;
  for (const std::string& key : table_param_keys()) {
    if (rows.size() == 1 || varies(rows, key)) {
      columns.push_back(key);
    }
  }
  columns.insert(columns.end(), {"params", "dev_ppl", "dev_bleu"});
  const auto any = [&](const std::string& column, auto&& predicate) {
    for (const TableRow& row : rows) {
      if (predicate(row)) {
        columns.push_back(column);
        return;
      }
    }
  };
  any("test_bleu", [](const TableRow& row) { return row.has_test; });
  for (const char* ref : {"ref_ppl", "ref_bleu", "ref_params"}) {
    any(ref, [&](const TableRow& row) { return !row.values[ref].is_null(); });
  }
  return columns;
}

}  // namespace

json RunStore::newest_evals(std::int64_t run_id) {
  SQLite::Statement query(sql_,
                          "SELECT split, perplexity, bleu FROM evals "
                          "WHERE run_id = ? AND split IN ('valid', 'test') ORDER BY id");
  query.bind(1, run_id);
  json newest = json::object();  // later rows overwrite earlier ones: the newest wins
  while (query.executeStep()) {
    newest[query.getColumn(0).getString()] = json{{"perplexity", column_json(query.getColumn(1))},
                                                  {"bleu", column_json(query.getColumn(2))}};
  }
  return newest;
}

json RunStore::sweep_table(const std::string& sweep) {
  SQLite::Statement query(sql_,
                          "SELECT id AS run_id, name, row_label, row_index, status FROM runs "
                          "WHERE sweep = ? ORDER BY row_index IS NULL, row_index, id");
  query.bind(1, sweep);
  std::vector<TableRow> rows;
  while (query.executeStep()) {
    TableRow row{row_json(query), json::object(), false};
    const json params = run_params(row.head["run_id"].get<std::int64_t>());
    const json evals = newest_evals(row.head["run_id"].get<std::int64_t>());
    for (const std::string& key : table_param_keys()) {
      row.values[key] = param_or_null(params, key.c_str());
    }
    row.values["params"] = param_or_null(params, "model.parameter_count");
    const json valid = evals.value("valid", json::object());
    row.values["dev_ppl"] = valid.value("perplexity", json(nullptr));
    row.values["dev_bleu"] = valid.value("bleu", json(nullptr));
    row.has_test = evals.contains("test");
    row.values["test_bleu"] = evals.value("test", json::object()).value("bleu", json(nullptr));
    row.values["ref_ppl"] = param_or_null(params, "ref.ppl");
    row.values["ref_bleu"] = param_or_null(params, "ref.bleu");
    row.values["ref_params"] = param_or_null(params, "ref.params");
    rows.push_back(std::move(row));
  }
  if (rows.empty()) {
    throw NotFound(fmt::format("unknown sweep '{}': no run names it", sweep));
  }
  const std::vector<std::string> columns = table_columns(rows);
  json table = {{"sweep", sweep}, {"columns", columns}, {"rows", json::array()}};
  for (TableRow& row : rows) {
    row.head["values"] = json::object();
    for (const std::string& column : columns) {
      row.head["values"][column] = row.values[column];
    }
    table["rows"].push_back(std::move(row.head));
  }
  return table;
}

}  // namespace nmt::tracker
