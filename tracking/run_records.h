#pragma once
// What a tool records in a training run's tracked run after the training (nmt-evaluate --record:
// an eval and the checkpoint scored; nmt-average --record: the average). Like the trainer, a tool
// never loses its records to a daemon that is not there: what the daemon does not take goes into a
// spool file of the tool's own in the run directory (common/run_layout.h: tool_spool_path), in the
// trainer's spool format (tracker/client/spool.h) with run_id null, so that it applies to the run
// of the directory's run.json, and `nmt-tracker sync RUN_DIR` delivers it
// (tracking/run_dir_sync.h).
//
// Spooled, with a warning that names the file and the sync command, and the tool goes on: no
// daemon found (its port file is gone), no answer (refused connection, a timeout, a failed TLS
// handshake: the warning says which), an answer of 5xx, 408 or 429 (the daemon cannot take them
// now), and a daemon with no run of run.json's uid (the training ran without a tracker: sync
// registers the run). A refusal of the records (401 for the token, 400...) is an error, which sync
// would meet in the same way: the records stay in the spool, and the error names it. Delivered
// whole, they leave no file.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tracker/api/wire_types.h"
#include "tracker/client/daemon_address.h"
#include "tracking/run_identity.h"

namespace nmt::tracking {

// Where a recording tool's daemon is: its address, or why it cannot be known now.
struct RecordingDaemon {
  std::optional<tracker::DaemonAddress> address;
  std::string unreachable;  // without an address: why ("no port file P (named by ...)")
};

// A tool's records, sent in this order: evals, then artifacts.
struct RunRecords {
  std::vector<tracker::api::EvalRecord> evals;
  std::vector<tracker::api::ArtifactRecord> artifacts;
};

struct RecordResult {
  std::optional<std::int64_t> run_id;  // the daemon's run, when delivered
  std::string spool_file;              // where the records wait; empty when delivered
};

class RunRecorder {
 public:
  // Records in the tracked run of `run_dir` (its run.json) as `tool` (lowercase letters, digits
  // and dashes: "nmt-evaluate"). Throws std::runtime_error naming run.json when `run_dir` has none,
  // so that a tool checks it before its work; contacts nothing.
  RunRecorder(RecordingDaemon daemon, std::string run_dir, std::string tool);

  // Delivers `records`, waiting for each request at most `timeout`, or spools what the daemon did
  // not take. Throws std::runtime_error when the daemon refused them (the spool named).
  RecordResult record(const RunRecords& records,
                      std::chrono::milliseconds timeout = std::chrono::seconds(10)) const;

  const std::string& run_dir() const { return run_dir_; }

 private:
  RecordingDaemon daemon_;
  std::string run_dir_;
  std::string tool_;
  RunIdentity identity_;
};

}  // namespace nmt::tracking
