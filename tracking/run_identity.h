#pragma once
// Which tracked run a run directory is. A fresh training run draws a random uid and writes it to
// RUN_DIR/run.json with attempt 1; `--resume` of that directory reuses the uid with attempt + 1, so
// the tracker continues the same run (a requeued Slurm job, a restart after preemption). Nothing
// else identifies a run: two run directories never share a tracked run, whatever their names, and
// nmt-evaluate --record finds the run through the same file. A directory moved to another path
// stays its run: run.json keeps the name the run was registered under, which the resume sends
// again, and records the directory's new path. A copy whose original is still in place is refused
// instead. The uid follows the protocol's rule (tracker/api/run_rules.h); the trainer only carries
// it, into its checkpoints.

#include <optional>
#include <string>
#include <vector>

#include "tracker/api/wire_types.h"

namespace nmt::tracking {

struct RunIdentity {
  std::string uid;  // tracker::api::generate_run_uid(): 32 hex digits
  int attempt = 1;  // 1 for the fresh run, +1 per resume
  // The name the tracker knows the run by (the directory's name at the first attempt, unless
  // tracker.run_name gave one); empty where run.json has none.
  std::string name;
  std::string run_dir;  // the directory's absolute path at the latest attempt; empty likewise
  // Where this attempt runs (written for people and tools to read; not part of the identity):
  int world_size = 0;              // MPI ranks; 0: not recorded
  std::vector<std::string> hosts;  // the ranks' distinct hosts, rank 0's first
  // The attempt's provenance as the tracker gets it (run_tracking.h: provenance_params), written
  // once the trainer is set up, so that nmt-tracker sync sends it for a run no daemon saw.
  tracker::api::Params provenance;
};

// RUN_DIR/run.json, or nullopt when there is none. Throws std::runtime_error naming the file when
// it exists but is not a valid identity.
std::optional<RunIdentity> read_run_identity(const std::string& run_dir);

// The identity this process runs under: the stored one with attempt + 1 when resuming a directory
// that has one, else a new uid with attempt 1; its run_dir is `run_dir`'s absolute path, and its
// name, where none was stored, the directory's name. Does not write it. Throws
// std::runtime_error when resuming a copy: the stored path is elsewhere and still holds a run.json
// of the same uid.
RunIdentity next_run_identity(const std::string& run_dir, bool resume);

// Writes RUN_DIR/run.json atomically.
void write_run_identity(const std::string& run_dir, const RunIdentity& identity);

}  // namespace nmt::tracking
