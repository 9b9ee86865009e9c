#pragma once
// What a training run directory recorded of its run, read for `nmt-tracker sync`
// (tracking/run_dir_sync.h): the registration the trainer would have sent (run.json's uid,
// attempt and name; config.yaml's text, tracker section and params), the spool files (the
// trainer's client's, and the tools' that recorded in the run while the daemon was away),
// the files the tools register as artifacts, and how far the checkpoints got.
//
// Artifacts found (paths absolute): checkpoints/step-N.h5 (kind "checkpoint", step N),
// checkpoints/best.h5 ("best"), averaged*.h5 ("averaged"), and analysis.md /
// analysis.svg in the directory or its analysis/ folder ("analysis" / "analysis_chart", with
// their text when not empty and within the daemon's default content limit, as nmt-analyze
// records them).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tracker/api/wire_types.h"

namespace nmt::tracking {

struct RunDirRecord {
  std::string dir;                             // as given
  tracker::api::RunRegistration registration;  // uid, attempt, experiment, name, config, params...
  std::int64_t max_steps = 0;                  // the config's train.max_steps
  std::vector<std::string> spool_files;        // tracker-spool-rank*.jsonl, by rank
  // The tools' spools (run_layout::tool_spool_path: nmt-evaluate --record...), oldest first.
  std::vector<std::string> tool_spool_files;
  std::optional<std::int64_t> last_checkpoint_step;  // the newest checkpoints/step-N.h5
  // Entries of the directory that could not be read ("PATH: a loop of symbolic links"): the
  // rest is synced, and the directory is reported as not fully synced.
  std::vector<std::string> problems;
};

// Throws std::runtime_error naming the file when run.json or config.yaml is missing or invalid.
RunDirRecord read_run_dir(const std::string& dir);

// The artifacts present in `dir`, in a fixed order (kind, then path); entries that could not be
// read are added to `problems` as RunDirRecord's are.
std::vector<tracker::api::ArtifactRecord> run_dir_artifacts(const std::string& dir,
                                                            std::vector<std::string>& problems);

// The status of a run that never reported one: "finished" when its newest checkpoint reached
// train.max_steps, else "crashed" (it ended without a report; `nmt-tracker set-status` corrects
// one that stopped on train.max_minutes or early stopping).
std::string status_from_run_dir(const RunDirRecord& record);

}  // namespace nmt::tracking
