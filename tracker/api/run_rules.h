#pragma once
// The rules both sides of the protocol check (tracker/API.md): what a run uid may be and which
// statuses a run may have. One definition, used by the daemon's handler and store, by the clients
// and by the run directory's run.json, so that a uid the client accepts is never refused by the
// daemon.

#include <cstdint>
#include <string>
#include <vector>

#include "common/metrics_log.h"

namespace nmt::tracker::api {

// 8 to 64 characters of A-Z, a-z, 0-9, '_' and '-'.
bool is_valid_run_uid(const std::string& uid);
// A new run uid: 32 hex digits from std::random_device (128 bits, no coordination needed).
std::string generate_run_uid();
// The words of every error about a uid.
inline constexpr const char* kRunUidRule =
    "must be 8 to 64 characters of A-Z, a-z, 0-9, '_' and '-'";

// The statuses a run and each of its attempts may have. kPreempted: stopped by the scheduler (Slurm
// preemption, time limit) and expected to resume as the next attempt of the same run. kCrashed:
// what the daemon marks an attempt still running when a later attempt of its run registers, or
// that has been silent (no heartbeat, no status) for longer than the daemon's --crashed-after.
enum class RunStatus { kRunning, kFinished, kFailed, kKilled, kPreempted, kCrashed };

// The status's word on the wire and in the database: "running", "finished"...
const char* to_string(RunStatus status);
// Whether `status` is the word of a RunStatus.
bool is_valid_run_status(const std::string& status);
// Every RunStatus's word, in the order of the enum.
std::vector<std::string> run_status_words();
inline constexpr const char* kRunStatusRule =
    "must be one of running, finished, failed, killed, preempted, crashed";

// The ranges of the integers a client sends (tracker/API.md, "Numbers"), checked by the reader of
// every request, so that the store and the views compute spans and widths from them without
// overflow. A step is an optimizer step, at most 2^53 - 1: the largest integer every JSON reader
// (the dashboard's JavaScript too) holds exactly. Ranks, world sizes, attempts, sweep rows and
// checkpoint counts are at most 2^31 - 1.
inline constexpr std::int64_t kMaxStep = kMaxMetricStep;
inline constexpr std::int64_t kMaxCount = (std::int64_t{1} << 31) - 1;

}  // namespace nmt::tracker::api
