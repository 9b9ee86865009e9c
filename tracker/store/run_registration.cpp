// RunStore's registrations (tracker/API.md, POST /api/runs): a new run, or a run resumed by its
// uid with a higher attempt, with its attempt row and params, in one IMMEDIATE transaction; and
// the count behind the per-run params limit.

#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>

#include <cmath>

#include "tracker/api/run_rules.h"
#include "tracker/store/run_store.h"
#include "tracker/store/sql_rows.h"

namespace nmt::tracker {
namespace {

void validate_spec(const RunSpec& spec) {
  require_text(spec.experiment, "experiment");
  require_text(spec.name, "run name");
  if (spec.uid && !api::is_valid_run_uid(*spec.uid)) {
    throw std::invalid_argument(fmt::format("uid '{}' {}", *spec.uid, api::kRunUidRule));
  }
  if (spec.attempt.value_or(1) < 1) {
    throw std::invalid_argument(fmt::format("attempt must be at least 1, not {}", *spec.attempt));
  }
  for (const auto& [key, value] : spec.params) {
    if (key.empty()) {
      throw std::invalid_argument("params must not have an empty key");
    }
    if (const double* number = std::get_if<double>(&value); number && !std::isfinite(*number)) {
      throw std::invalid_argument(fmt::format("param '{}' must be finite", key));
    }
  }
}

// Binds the ten optional run fields from `first` on, in the order the run SQL lists them.
// Binds the ten optional run fields from `first` on, in the order the run SQL lists them.
void bind_run_fields(SQLite::Statement& statement, int first, const RunSpec& spec) {
  bind_values(statement, first, spec.sweep, spec.row_label, spec.row_index, spec.config,
              spec.config_hash, spec.git_revision, spec.host, spec.world_size, spec.slurm_job_id,
              spec.slurm_array_id);
}

}  // namespace

RunHandle RunStore::create_or_resume_run(const RunSpec& spec) {
  validate_spec(spec);
  SQLite::Transaction transaction(sql_, SQLite::TransactionBehavior::IMMEDIATE);
  const double now = now_seconds();
  const std::int64_t experiment = experiment_id(spec.experiment, now);
  std::optional<RunHandle> handle;
  if (spec.uid) {
    SQLite::Statement existing(sql_,
                               "SELECT id, attempt, experiment_id, name FROM runs WHERE uid = ?");
    existing.bind(1, *spec.uid);
    if (existing.executeStep()) {
      const RunHandle stored{existing.getColumn(0).getInt64(), existing.getColumn(1).getInt64(),
                             false};
      if (existing.getColumn(2).getInt64() != experiment ||
          existing.getColumn(3).getString() != spec.name) {
        throw Conflict(fmt::format(
            "uid '{}' belongs to run {} '{}', not to '{}' of experiment '{}'; a copied run "
            "directory must not keep its uid (remove it to register a new run)",
            *spec.uid, stored.run_id, existing.getColumn(3).getString(), spec.name,
            spec.experiment));
      }
      if (spec.attempt.value_or(1) <= stored.attempt) {
        return stored;  // a replayed registration: the rollback leaves everything as it was
      }
      handle = resume_run(stored.run_id, spec, now);
    }
  }
  if (!handle) {
    handle = insert_run(experiment, spec, now);
  }
  insert_attempt(handle->run_id, spec, now);
  upsert_params(handle->run_id, spec.params);
  transaction.commit();
  return *handle;
}

std::int64_t RunStore::experiment_id(const std::string& name, double now) {
  SQLite::Statement insert(
      sql_, "INSERT INTO experiments(name, created_at) VALUES (?, ?) ON CONFLICT(name) DO NOTHING");
  insert.bind(1, name);
  insert.bind(2, now);
  insert.exec();
  SQLite::Statement select(sql_, "SELECT id FROM experiments WHERE name = ?");
  select.bind(1, name);
  select.executeStep();
  return select.getColumn(0).getInt64();
}

RunHandle RunStore::resume_run(std::int64_t run_id, const RunSpec& spec, double now) {
  // An earlier attempt still running never reported its end (SIGKILL, a lost node): it ended no
  // later than this one started. A late report of its own status may still replace `crashed`.
  SQLite::Statement crashed(sql_,
                            "UPDATE run_attempts SET status = 'crashed', ended_at = ? "
                            "WHERE run_id = ? AND attempt < ? AND status = 'running'");
  crashed.bind(1, now);
  crashed.bind(2, run_id);
  crashed.bind(3, *spec.attempt);  // above the stored attempt, so given
  crashed.exec();
  // Fields the new attempt does not send keep their earlier values; started_at stays the run's
  // first start (each attempt's own is in run_attempts).
  SQLite::Statement resume(
      sql_,
      "UPDATE runs SET sweep = COALESCE(?, sweep), row_label = COALESCE(?, row_label), "
      "row_index = COALESCE(?, row_index), config = COALESCE(?, config), "
      "config_hash = COALESCE(?, config_hash), git_revision = COALESCE(?, git_revision), "
      "host = COALESCE(?, host), world_size = COALESCE(?, world_size), "
      "slurm_job_id = COALESCE(?, slurm_job_id), slurm_array_id = COALESCE(?, slurm_array_id), "
      "attempt = ?, status = 'running', ended_at = NULL WHERE id = ?");
  bind_run_fields(resume, 1, spec);
  resume.bind(11, *spec.attempt);  // above the stored attempt, so given
  resume.bind(12, run_id);
  resume.exec();
  return RunHandle{run_id, *spec.attempt, true};
}

RunHandle RunStore::insert_run(std::int64_t experiment, const RunSpec& spec, double now) {
  SQLite::Statement insert(
      sql_,
      "INSERT INTO runs(sweep, row_label, row_index, config, config_hash, git_revision, host, "
      "world_size, slurm_job_id, slurm_array_id, experiment_id, name, uid, status, attempt, "
      "started_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'running', ?, ?)");
  bind_run_fields(insert, 1, spec);
  bind_values(insert, 11, experiment, spec.name, spec.uid, spec.attempt.value_or(1), now);
  insert.exec();
  return RunHandle{sql_.getLastInsertRowid(), spec.attempt.value_or(1), false};
}

void RunStore::insert_attempt(std::int64_t run_id, const RunSpec& spec, double now) {
  SQLite::Statement insert(sql_,
                           "INSERT INTO run_attempts(run_id, attempt, started_at, status, host, "
                           "world_size, slurm_job_id, slurm_array_id, run_dir, provenance, "
                           "last_contact_at) VALUES (?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?3)");
  const std::optional<std::string> provenance =
      spec.provenance.empty() ? std::nullopt : std::optional(params_json(spec.provenance));
  bind_values(insert, 1, run_id, spec.attempt.value_or(1), now, spec.host, spec.world_size,
              spec.slurm_job_id, spec.slurm_array_id, spec.run_dir, provenance);
  insert.exec();
}

void RunStore::upsert_params(std::int64_t run_id, const api::Params& params) {
  ResetOnExit reset(upsert_param_);
  for (const auto& [key, value] : params) {
    upsert_param_.tryReset();
    upsert_param_.bind(1, run_id);
    upsert_param_.bind(2, key);
    if (const auto* text = std::get_if<std::string>(&value)) {
      upsert_param_.bind(3, *text);
      bind_optional(upsert_param_, 4, bool_number(*text));  // filters by 1/0 still find bools
    } else {
      upsert_param_.bind(3);
      upsert_param_.bind(4, std::get<double>(value));
    }
    upsert_param_.exec();
  }
}

std::optional<std::int64_t> RunStore::param_count_with(const RunSpec& spec) {
  if (spec.params.empty()) return std::nullopt;
  const auto registered = static_cast<std::int64_t>(spec.params.size());
  if (!spec.uid) return registered;
  SQLite::Statement run(sql_, "SELECT id, attempt FROM runs WHERE uid = ?");
  run.bind(1, *spec.uid);
  if (!run.executeStep()) return registered;
  if (spec.attempt.value_or(1) <= run.getColumn(1).getInt64()) {
    return std::nullopt;  // a replayed registration writes nothing
  }
  const std::int64_t run_id = run.getColumn(0).getInt64();
  SQLite::Statement known(sql_, "SELECT 1 FROM params WHERE run_id = ? AND key = ?");
  known.bind(1, run_id);
  std::int64_t added = 0;
  for (const auto& [key, value] : spec.params) {
    known.tryReset();
    known.bindNoCopy(2, key);
    added += known.executeStep() ? 0 : 1;
  }
  if (added == 0) return std::nullopt;
  SQLite::Statement stored(sql_, "SELECT COUNT(*) FROM params WHERE run_id = ?");
  stored.bind(1, run_id);
  stored.executeStep();
  return stored.getColumn(0).getInt64() + added;
}

}  // namespace nmt::tracker
