#include "tracking/run_dir_sync.h"

// nmt-tracker sync: uploads training runs that never reached a daemon (trained without a tracker,
// or while it was down or unreachable), as `wandb sync` does: each run directory's registration
// (run.json, config.yaml), whatever the trainer's client spooled and never delivered
// (tracker-spool-rank*.jsonl: metrics, evals, artifacts, statuses), what the tools recording in
// the run could not deliver (tracker-spool-TIME-TOOL-PID.jsonl: evals, artifacts; a file delivered
// whole is removed, as its tool would have), every point of metrics.jsonl, the artifacts present
// (tracking/run_dir_record.h), and a final status.
//
// Idempotent: registration replays by uid and attempt, metric batches are keyed by (run, rank,
// sequence) and points by (run, key, step), and the daemon keeps an eval or artifact sent again
// once (tracker/API.md). metrics.jsonl's batches carry a sequence derived from their content,
// below the clock-derived range the trainer's client uses, so a batch synced before is
// acknowledged as a duplicate and stores nothing, and a changed one (a resumed run's rewritten
// steps) is stored. A status is written only where the stored one differs, so that ended_at
// keeps its first value.

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <ostream>
#include <set>

#include "common/checked_paths.h"
#include "common/cli.h"
#include "common/dir_lock.h"
#include "common/json_fields.h"
#include "common/metrics_log.h"
#include "common/mix64.h"
#include "common/progress.h"
#include "common/run_layout.h"
#include "tracker/api/wire_json.h"
#include "tracker/client/run_upload.h"
#include "tracker/client/spool.h"
#include "tracker/client/tracker_reader.h"
#include "tracking/run_dir_record.h"

namespace nmt::tracking {

using tracker::RunUploader;
using tracker::Spool;
using tracker::SpoolEntry;
using tracker::TrackerError;
using tracker::TrackerReader;
using tracker::TrackerUnreachable;
namespace api = tracker::api;

namespace {

namespace fs = std::filesystem;

// Sequences of metrics.jsonl's batches stay below 2^60; the trainer's client starts at the clock
// in milliseconds shifted left by 20 bits (above 2^60 since 2004), so the two never meet.
constexpr std::uint64_t kSyncSequenceMask = (std::uint64_t{1} << 60) - 1;

struct SyncCounts {
  std::int64_t points_sent = 0, points_stored = 0, refused = 0;
  std::set<std::int64_t> evals, artifacts;  // the ids the daemon answered: each record once
  std::string status;
};

std::uint64_t mix_in(std::uint64_t hash, std::uint64_t value) {
  return splitmix64_finalize(hash ^ (value + kSplitMix64Gamma));
}

std::uint64_t bits_of(double value) {
  std::uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

// The batch's sequence: a hash of its points, so the same points give the same sequence.
std::int64_t content_sequence(const api::MetricBatch& batch) {
  std::uint64_t hash = 0x73796e63;  // "sync"
  for (const auto& point : batch.points) {
    for (const char c : point.key) hash = mix_in(hash, static_cast<unsigned char>(c));
    hash = mix_in(hash, static_cast<std::uint64_t>(point.step));
    hash = mix_in(hash, bits_of(point.value));
    hash = mix_in(hash, bits_of(point.time.value_or(0.0)));
  }
  return static_cast<std::int64_t>(hash & kSyncSequenceMask);
}

// A record the daemon refuses for what it holds (400, 413: over a limit, malformed; it never
// will accept it) is reported and skipped, as the trainer's client drops it; any other failure
// (a refused token, an unknown run, the store) stops this directory.
template <class Send>
bool send_or_skip(const std::string& what, SyncCounts& counts, Send&& send) {
  try {
    send();
    return true;
  } catch (const TrackerError& e) {
    if (e.status() != 400 && e.status() != 413) throw;
    spdlog::warn("{}: refused, skipped: {}", what, e.what());
    ++counts.refused;
    return false;
  }
}

// Sends the entries of the spool at `path` but statuses, which are added to `statuses` (applied
// last, in order). Returns whether the daemon acknowledged every entry sent.
bool send_spool(RunUploader& uploader, std::int64_t run_id, const std::string& path,
                SyncCounts& counts, std::vector<api::StatusUpdate>& statuses) {
  const Spool spool(path);
  bool acknowledged = true;
  std::size_t index = 0;
  for (const SpoolEntry& entry : spool.entries()) {
    ++index;
    if (entry.kind == "status") {
      statuses.push_back(api::parse<api::StatusUpdate>(nlohmann::json::parse(entry.body)));
      continue;
    }
    const std::string what = fmt::format("{}: entry {} ({})", path, index, entry.kind);
    const bool sent = send_or_skip(what, counts, [&] {
      const auto answer = uploader.send_spooled(run_id, entry);
      const Fields fields = object_fields(answer, "answer");
      if (entry.kind == "metrics") {
        counts.points_sent += static_cast<std::int64_t>(entry.points);
        counts.points_stored += fields.optional_integer("stored").value_or(0);
      } else if (entry.kind == "evals") {
        counts.evals.insert(fields.integer("eval_id"));
      } else {
        counts.artifacts.insert(fields.integer("artifact_id"));
      }
    });
    if (!sent) acknowledged = false;
  }
  return acknowledged;
}

// Sends the spools' entries, the trainer's by rank and then the tools' oldest first, but
// statuses, which are returned (applied last, in order). A tool's spool belongs to one process of
// the tool, which wrote it whole as it ended: once the daemon acknowledged all of it, it is
// removed. The trainer's stay, for its client to truncate.
std::vector<api::StatusUpdate> send_spools(RunUploader& uploader, std::int64_t run_id,
                                           const RunDirRecord& record, SyncCounts& counts) {
  std::vector<api::StatusUpdate> statuses;
  for (const auto& path : record.spool_files) send_spool(uploader, run_id, path, counts, statuses);
  for (const auto& path : record.tool_spool_files) {
    if (!send_spool(uploader, run_id, path, counts, statuses)) {
      spdlog::warn("{}: kept: the daemon refused some of it (above)", path);
      continue;
    }
    std::error_code error;
    fs::remove(path, error);
    if (error) {
      spdlog::warn("{}: delivered, but cannot be removed: {}", path, error.message());
    } else {
      spdlog::info("{}: delivered, removed", path);
    }
  }
  return statuses;
}

// metrics.jsonl, a batch at a time. A malformed line stops here, after the lines before it were
// delivered.
void send_metrics_log(RunUploader& uploader, std::int64_t run_id, const std::string& path,
                      std::size_t batch_lines, SyncCounts& counts) {
  MetricsLogReader reader(path);
  ProgressMeter progress("sync " + path, "points");
  std::int64_t lines = 0;
  for (;;) {
    const auto batch = reader.next_batch(batch_lines);
    if (batch.empty()) break;
    api::MetricBatch request;
    request.rank = 0;  // rank 0 alone writes metrics.jsonl
    for (const auto& line : batch) {
      if (line.value) request.points.push_back({line.key, line.step, *line.value, line.time});
    }
    lines += static_cast<std::int64_t>(batch.size());
    if (!request.points.empty()) {
      request.sequence = content_sequence(request);
      const auto answer = uploader.send_metrics(run_id, request);
      counts.points_sent += static_cast<std::int64_t>(request.points.size());
      counts.points_stored += answer.stored;
    }
    const double size = static_cast<double>(reader.size());
    progress.update(lines, size > 0 ? static_cast<double>(reader.bytes_read()) / size : 1.0);
  }
  progress.finish(lines);
}

// The run's final status: the spool's last word on each attempt the daemon knows, else (for a
// current attempt still "running", whose process is gone since we hold the directory's lock) what
// the directory shows. Written only where it differs from the stored one.
std::string settle_status(TrackerReader& reader, RunUploader& uploader, std::int64_t run_id,
                          const RunDirRecord& record,
                          const std::vector<api::StatusUpdate>& spooled) {
  const api::RunDetail detail = reader.get_run(run_id);
  const std::int64_t current = detail.summary.attempt;
  std::map<std::int64_t, std::string> stored, wanted;
  for (const auto& attempt : detail.attempts) stored[attempt.attempt] = attempt.status;
  stored[current] = detail.summary.status;
  for (const auto& update : spooled) wanted[update.attempt.value_or(current)] = update.status;
  if (!wanted.count(current) && stored[current] == "running") {
    wanted[current] = status_from_run_dir(record);
    spdlog::info("{}: no status reported for attempt {}: {} (from the checkpoints)", record.dir,
                 current, wanted[current]);
  }
  for (const auto& [attempt, status] : wanted) {
    if (!stored.count(attempt)) {
      spdlog::info("{}: status {} of attempt {} skipped: the daemon has no such attempt",
                   record.dir, status, attempt);
      continue;
    }
    if (stored[attempt] != status) uploader.set_status(run_id, {status, attempt});
  }
  return wanted.count(current) ? wanted[current] : stored[current];
}

SyncCounts sync_run_dir(TrackerReader& reader, RunUploader& uploader, const RunDirRecord& record,
                        const SyncArgs& args, std::int64_t& run_id) {
  // Held while syncing: a trainer cannot start on the directory (and rewrite metrics.jsonl), and
  // one still running is refused here, naming it.
  const DirectoryLock lock(record.dir, "nmt-tracker sync");
  const api::RunCreated created = uploader.register_run(record.registration);
  run_id = created.run_id;
  spdlog::info("{}: run {} (uid {}), attempt {} in the daemon", record.dir, run_id,
               *record.registration.uid, created.attempt);
  SyncCounts counts;
  const auto statuses = send_spools(uploader, run_id, record, counts);
  const fs::path metrics = run_layout::metrics_path(record.dir);
  if (!nothing_at(metrics.string())) {
    send_metrics_log(uploader, run_id, metrics.string(), args.batch_lines, counts);
  }
  // A file whose step the directory does not tell (best.h5) is skipped when the run has it with
  // its step already: the trainer's own record of it.
  std::set<std::pair<std::string, std::string>> known;
  for (const auto& artifact : reader.get_run(run_id).artifacts) {
    if (artifact.record.step) known.emplace(artifact.record.kind, artifact.record.path);
  }
  std::vector<std::string> problems = record.problems;
  for (const auto& artifact : run_dir_artifacts(record.dir, problems)) {
    if (!artifact.step && known.count({artifact.kind, artifact.path})) continue;
    send_or_skip(artifact.path, counts, [&] {
      counts.artifacts.insert(reader.log_artifact(run_id, artifact).artifact_id);
    });
  }
  counts.status = settle_status(reader, uploader, run_id, record, statuses);
  if (!problems.empty()) {
    throw std::runtime_error(fmt::format("{} unreadable: {}",
                                         problems.size() == 1 ? "an entry is" : "entries are",
                                         fmt::join(problems, "; ")));
  }
  return counts;
}

}  // namespace

int sync_runs(TrackerReader& reader, RunUploader& uploader, const SyncArgs& args,
              std::ostream& out) {
  if (args.batch_lines < 1) throw UsageError("--batch-lines must be at least 1");
  // Every directory's records are read before anything is sent; one that cannot be read (not a
  // run directory, a config that does not load) is reported and the others are synced. Entries
  // of a directory that cannot be read (a loop of links) are that directory's failure alone,
  // after the rest of it was synced. The exit status is 1 when any directory failed.
  std::vector<RunDirRecord> records;
  int failures = 0;
  for (const auto& dir : args.run_dirs) {
    try {
      records.push_back(read_run_dir(dir));
    } catch (const std::exception& e) {
      ++failures;
      spdlog::error("{}: not synced: {}", dir, e.what());
    }
  }
  for (const auto& record : records) {
    std::int64_t run_id = -1;
    try {
      const SyncCounts c = sync_run_dir(reader, uploader, record, args, run_id);
      out << fmt::format(
                 "{}: run {} (uid {}): {} points sent ({} stored), {} evals, {} artifacts, status "
                 "{}{}",
                 record.dir, run_id, *record.registration.uid, c.points_sent, c.points_stored,
                 c.evals.size(), c.artifacts.size(), c.status,
                 c.refused > 0 ? fmt::format(", {} refused", c.refused) : std::string())
          << "\n";
    } catch (const TrackerUnreachable&) {
      throw;
    } catch (const std::exception& e) {
      ++failures;
      spdlog::error("{}: not fully synced{}: {}", record.dir,
                    run_id >= 0 ? fmt::format(" (run {}: what was sent is kept)", run_id) : "",
                    e.what());
    }
  }
  return failures > 0 ? 1 : 0;
}

}  // namespace nmt::tracking
