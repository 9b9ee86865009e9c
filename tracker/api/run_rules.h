#pragma once
// The rules both sides of the protocol check (tracker/API.md): what a run uid may be and which
// statuses a run may have. One definition, used by the daemon's handler and store, by the clients
// and by the run directory's run.json, so that a uid the client accepts is never refused by the
// daemon.

#include <string>

namespace nmt::tracker::api {

// 8 to 64 characters of A-Z, a-z, 0-9, '_' and '-'.
bool is_valid_run_uid(const std::string& uid);
// A new run uid: 32 hex digits from std::random_device (128 bits, no coordination needed).
std::string generate_run_uid();
// The words of every error about a uid.
inline constexpr const char* kRunUidRule =
    "must be 8 to 64 characters of A-Z, a-z, 0-9, '_' and '-'";

// running, finished, failed, killed, preempted or crashed (what the daemon marks an attempt still
// running when a later attempt of its run registers).
bool is_valid_run_status(const std::string& status);
inline constexpr const char* kRunStatusRule =
    "must be one of running, finished, failed, killed, preempted, crashed";

}  // namespace nmt::tracker::api
