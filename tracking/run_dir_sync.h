#pragma once
// `nmt-tracker sync RUN_DIR...` (apps/nmt_tracker.cpp parses its flags): uploads training runs
// recorded offline: registration, spooled requests, metrics.jsonl, artifacts, final status;
// running it again adds nothing. A one-line summary per directory; exit 1 when a directory could
// not be read or synced whole (what was sent before the error is kept). Errors as the other
// subcommands' (tracker/cli/commands.h).

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

namespace nmt::tracker {
class TrackerReader;
class RunUploader;
}  // namespace nmt::tracker

namespace nmt::tracking {

struct SyncArgs {
  std::vector<std::string> run_dirs;
  std::size_t batch_lines = 5000;  // metrics.jsonl lines per request
};
int sync_runs(tracker::TrackerReader& reader, tracker::RunUploader& uploader, const SyncArgs& args,
              std::ostream& out);

}  // namespace nmt::tracking
