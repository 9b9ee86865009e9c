#pragma once
// How people name a run on nmt-tracker's command line: by its id ("12") or by its name
// ("quickstart-20261201-101500"). Names are labels, so a name that several runs share is an error
// listing them by id, experiment and start, and a name that matches no run lists the names that
// contain it. An id is any string of digits; the daemon says when no run has it.

#include <cstdint>
#include <string>

namespace nmt::tracker {
class TrackerReader;
}

namespace nmt::tracker::cli {

// The run id `ref` stands for. `include_deleted`: soft-deleted runs count too (restore).
// Throws std::runtime_error (no such name, an ambiguous one), nmt::UsageError (an empty ref).
std::int64_t resolve_run(TrackerReader& reader, const std::string& ref,
                         bool include_deleted = false);

}  // namespace nmt::tracker::cli
