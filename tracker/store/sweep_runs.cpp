// RunStore::sweep_runs: the rows of one sweep with their params and newest valid and test evals;
// tracker/server/sweep_layout.h chooses the table's columns from them.

#include <fmt/format.h>

#include "tracker/store/run_store.h"
#include "tracker/store/sql_rows.h"

namespace nmt::tracker {

std::optional<EvalFigures> RunStore::newest_eval(std::int64_t run_id, const char* split) {
  SQLite::Statement query(sql_,
                          "SELECT perplexity, bleu FROM evals WHERE run_id = ? AND split = ? "
                          "ORDER BY id DESC LIMIT 1");
  query.bind(1, run_id);
  query.bind(2, split);
  if (!query.executeStep()) return std::nullopt;
  return EvalFigures{optional_number(query.getColumn(0)), optional_number(query.getColumn(1))};
}

std::vector<SweepRun> RunStore::sweep_runs(const std::string& sweep) {
  SQLite::Statement query(sql_,
                          "SELECT id, name, row_label, row_index, status FROM runs "
                          "WHERE sweep = ? AND deleted_at IS NULL "
                          "ORDER BY row_index IS NULL, row_index, id");
  query.bind(1, sweep);
  std::vector<SweepRun> runs;
  while (query.executeStep()) {
    SweepRun run;
    run.run_id = query.getColumn(0).getInt64();
    run.name = query.getColumn(1).getString();
    run.row_label = optional_text(query.getColumn(2));
    run.row_index = optional_integer(query.getColumn(3));
    run.status = query.getColumn(4).getString();
    run.params = run_params(run.run_id);
    run.valid = newest_eval(run.run_id, "valid");
    run.test = newest_eval(run.run_id, "test");
    runs.push_back(std::move(run));
  }
  if (runs.empty()) {
    throw NotFound(fmt::format("unknown sweep '{}': no run (that is not deleted) names it", sweep));
  }
  return runs;
}

}  // namespace nmt::tracker
