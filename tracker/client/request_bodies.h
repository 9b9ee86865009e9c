#pragma once
// The JSON bodies of the client's POST requests (tracker/API.md), built from its records. Never
// throws on odd input, since they are built on the client's worker thread: invalid UTF-8 is
// replaced, and a non-finite optional number (a diverged perplexity) is left out, as JSON cannot
// carry it.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "tracker/client/tracker_client.h"

namespace nmt::tracker {

std::string run_body(const RunInfo& info);
std::string eval_body(const EvalRecord& eval);
std::string artifact_body(const ArtifactRecord& artifact);
// `attempt`: the attempt reporting it, so that a late report cannot end a newer attempt.
std::string status_body(RunStatus status, std::optional<int> attempt);
// One metrics batch; `points` is an array of metric_point().
std::string metrics_body(std::int64_t rank, std::int64_t sequence, nlohmann::json points);
nlohmann::json metric_point(const std::string& key, std::int64_t step, double value, double time);

}  // namespace nmt::tracker
