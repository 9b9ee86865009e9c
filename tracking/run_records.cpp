#include "tracking/run_records.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/atomic_file.h"
#include "common/run_layout.h"
#include "tracker/api/wire_json.h"
#include "tracker/api/wire_text.h"
#include "tracker/client/run_upload.h"
#include "tracker/client/spool.h"
#include "tracker/client/tracker_reader.h"

namespace nmt::tracking {
namespace {

using tracker::SpoolEntry;

std::vector<SpoolEntry> spool_entries(const RunRecords& records) {
  std::vector<SpoolEntry> entries;
  for (const auto& eval : records.evals) {
    entries.push_back({"evals", std::nullopt, tracker::api::wire_text(eval), 0, std::nullopt});
  }
  for (const auto& artifact : records.artifacts) {
    entries.push_back(
        {"artifacts", std::nullopt, tracker::api::wire_text(artifact), 0, std::nullopt});
  }
  return entries;
}

// "1 eval, 2 artifacts"
std::string describe(const std::vector<SpoolEntry>& entries) {
  std::size_t evals = 0;
  for (const auto& entry : entries) evals += entry.kind == "evals" ? 1 : 0;
  const std::size_t artifacts = entries.size() - evals;
  std::vector<std::string> parts;
  if (evals > 0) parts.push_back(fmt::format("{} eval{}", evals, evals == 1 ? "" : "s"));
  if (artifacts > 0) {
    parts.push_back(fmt::format("{} artifact{}", artifacts, artifacts == 1 ? "" : "s"));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// An answer that means "not now": the daemon overloaded, restarting, or its store busy.
bool is_temporary(int status) {
  return status >= 500 || status == 408 || status == 429;
}

std::int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The daemon's run of `uid`, a deleted one included (it is still this run).
std::optional<std::int64_t> find_run(const tracker::DaemonAddress& daemon, const std::string& uid,
                                     std::chrono::milliseconds timeout) {
  tracker::TrackerReader reader(daemon, timeout);
  tracker::api::RunQuery query;
  query.uid = uid;
  query.deleted = tracker::api::DeletedRuns::kAll;
  for (const auto& run : reader.list_runs(query)) {
    if (run.uid == uid) return run.run_id;
  }
  return std::nullopt;
}

}  // namespace

RunRecorder::RunRecorder(RecordingDaemon daemon, std::string run_dir, std::string tool)
    : daemon_(std::move(daemon)), run_dir_(std::move(run_dir)), tool_(std::move(tool)) {
  auto identity = read_run_identity(run_dir_);
  if (!identity) {
    throw std::runtime_error(fmt::format(
        "{}: missing, so no tracked run to record in (pass the training run's directory)",
        run_layout::identity_path(run_dir_)));
  }
  identity_ = std::move(*identity);
}

RecordResult RunRecorder::record(const RunRecords& records,
                                 std::chrono::milliseconds timeout) const {
  const auto entries = spool_entries(records);
  RecordResult result;
  std::size_t sent = 0;
  std::string why;       // why the rest was not delivered
  bool refused = false;  // for good: an error
  bool unknown = false;  // the daemon has no run of the uid
  if (!daemon_.address) {
    why = daemon_.unreachable;
  } else {
    try {
      result.run_id = find_run(*daemon_.address, identity_.uid, timeout);
      if (result.run_id) {
        tracker::RunUploader uploader(*daemon_.address, timeout);
        for (; sent < entries.size(); ++sent) uploader.send_spooled(*result.run_id, entries[sent]);
      } else {
        unknown = true;
        why = fmt::format(
            "nmt-trackerd at {} has no run of uid {} ({}): the training was not tracked there",
            daemon_.address->url, identity_.uid, run_layout::identity_path(run_dir_));
      }
    } catch (const tracker::TrackerUnreachable& e) {
      why = e.what();
    } catch (const tracker::TrackerError& e) {
      why = e.what();
      refused = !is_temporary(e.status());
    }
  }
  if (sent == entries.size() && result.run_id) return result;

  const std::vector<SpoolEntry> rest(entries.begin() + static_cast<std::ptrdiff_t>(sent),
                                     entries.end());
  std::string lines;
  for (const auto& entry : rest) lines += tracker::encode_spool_entry(entry) + "\n";
  // Whole or not at all: a sync reading the directory meanwhile never sees half a file.
  result.spool_file = run_layout::tool_spool_path(run_dir_, tool_, unix_ms(), ::getpid());
  write_file_atomically(result.spool_file, lines);
  if (refused) {
    throw std::runtime_error(fmt::format(
        "{}; the records not delivered ({}) wait in {}: once that is fixed, `nmt-tracker sync {}` "
        "delivers them",
        why, describe(rest), result.spool_file, run_dir_));
  }
  spdlog::warn("tracker: the records ({}) wait in {}: `nmt-tracker sync {}` {}delivers them ({})",
               describe(rest), result.spool_file, run_dir_, unknown ? "registers the run and " : "",
               why);
  return result;
}

}  // namespace nmt::tracking
