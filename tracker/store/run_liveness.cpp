// RunStore's view of which attempts are alive (tracker/API.md, "Heartbeats and crashed runs"):
// every registration, heartbeat and status is a contact of its attempt; an attempt still running
// whose last contact is too old is crashed, and its own heartbeat brings it back.

#include <SQLiteCpp/Transaction.h>
#include <fmt/format.h>

#include "tracker/api/run_rules.h"
#include "tracker/store/run_store.h"
#include "tracker/store/sql_rows.h"

namespace nmt::tracker {

api::HeartbeatAnswer RunStore::heartbeat(std::int64_t run_id, std::optional<std::int64_t> attempt) {
  SQLite::Transaction transaction(sql_, SQLite::TransactionBehavior::IMMEDIATE);
  SQLite::Statement run(sql_, "SELECT attempt FROM runs WHERE id = ?");
  run.bind(1, run_id);
  if (!run.executeStep()) throw NotFound(fmt::format("unknown run {}", run_id));
  const std::int64_t current = run.getColumn(0).getInt64();
  const std::int64_t target = attempt.value_or(current);
  const double now = now_seconds();
  SQLite::Statement stored(sql_,
                           "SELECT status FROM run_attempts WHERE run_id = ? AND attempt = ?");
  bind_values(stored, 1, run_id, target);
  if (!stored.executeStep()) {
    throw NotFound(fmt::format("run {} has no attempt {}", run_id, target));
  }
  std::string status = stored.getColumn(0).getString();
  SQLite::Statement touch(
      sql_, "UPDATE run_attempts SET last_contact_at = ? WHERE run_id = ? AND attempt = ?");
  bind_values(touch, 1, now, run_id, target);
  touch.exec();
  // Only the current attempt comes back: an earlier one crashed when a later one registered, and
  // that later one is the run now.
  if (target == current && status == api::to_string(api::RunStatus::kCrashed)) {
    status = api::to_string(api::RunStatus::kRunning);
    SQLite::Statement revive_attempt(
        sql_,
        "UPDATE run_attempts SET status = ?, ended_at = NULL WHERE run_id = ? AND attempt = ?");
    bind_values(revive_attempt, 1, status, run_id, target);
    revive_attempt.exec();
    SQLite::Statement revive_run(sql_, "UPDATE runs SET status = ?, ended_at = NULL WHERE id = ?");
    bind_values(revive_run, 1, status, run_id);
    revive_run.exec();
  }
  transaction.commit();
  return api::HeartbeatAnswer{run_id, target, status};
}

std::vector<SilentAttempt> RunStore::mark_silent_attempts(double silence_s) {
  SQLite::Transaction transaction(sql_, SQLite::TransactionBehavior::IMMEDIATE);
  const double before = now_seconds() - silence_s;
  SQLite::Statement silent(sql_,
                           "SELECT run_id, attempt, COALESCE(last_contact_at, started_at) AS last "
                           "FROM run_attempts WHERE status = 'running' AND last < ?");
  silent.bind(1, before);
  std::vector<SilentAttempt> found;
  while (silent.executeStep()) {
    found.push_back({silent.getColumn(0).getInt64(), silent.getColumn(1).getInt64(),
                     silent.getColumn(2).getDouble()});
  }
  const std::string crashed = api::to_string(api::RunStatus::kCrashed);
  SQLite::Statement end_attempt(
      sql_, "UPDATE run_attempts SET status = ?, ended_at = ? WHERE run_id = ? AND attempt = ?");
  SQLite::Statement end_run(sql_,
                            "UPDATE runs SET status = ?, ended_at = ? WHERE id = ? AND "
                            "attempt = ? AND status = 'running'");
  for (const auto& attempt : found) {
    for (auto* statement : {&end_attempt, &end_run}) {
      statement->reset();
      bind_values(*statement, 1, crashed, attempt.last_contact_at, attempt.run_id, attempt.attempt);
      statement->exec();
    }
  }
  transaction.commit();
  return found;
}

}  // namespace nmt::tracker
