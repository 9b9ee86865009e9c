#pragma once
// The step checkpoints of a run directory (their names: common/run_layout.h): listing, pruning,
// and the temporaries that a killed writer left.

#include <cstdint>
#include <string>
#include <vector>

namespace nmt::checkpoint {

// The step checkpoints of a run directory's checkpoints/ folder, oldest first.
std::vector<std::string> list_checkpoints(const std::string& run_dir);
// A fresh start (not `resume`) in a run directory that holds step checkpoints: an
// std::runtime_error saying to pass --resume or choose another directory.
void refuse_fresh_start_over_checkpoints(const std::string& run_dir, bool resume);
// Deletes all but the newest `keep` step checkpoints, and stale temporaries.
void prune_checkpoints(const std::string& run_dir, std::int64_t keep);
// Deletes the temporaries (NAME.tmp.PID) of atomic writes into the run directory and its
// checkpoints/ that another process left (a SIGKILL in the middle of a checkpoint), with a log
// line each; returns their paths. The caller holds the run directory's lock (run_dir_lock.h), so
// no other trainer is writing there: any other process's temporary is stale.
std::vector<std::string> remove_stale_temporaries(const std::string& run_dir);

}  // namespace nmt::checkpoint
