#pragma once
// How long the texts of a write may be and how many keys one run may hold (tracker/API.md, "Limits
// and fairness"). Every later read of a run answers what it holds (GET /api/runs/{run} lists its
// metric keys and params), so these bound what writes can make each read cost: a metric key of
// megabytes would make every read of its run megabytes long. The daemon checks them
// (RequestHandler; flags of nmt-trackerd) before any write, so a refused write stores nothing; a
// violation is a FieldError naming the field and the limit, answered 400.

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "common/json_fields.h"
#include "tracker/api/artifact_content.h"
#include "tracker/api/wire_types.h"

namespace nmt::tracker::api {

struct WriteLimits {
  // Names and keys: experiment, run name, sweep, row_label, host, git_revision, config_hash, the
  // Slurm ids, metric and param keys, an eval's split, an artifact's kind.
  std::size_t max_name_bytes = 256;
  // Longer texts: a param's text value (one scalar of a flattened config: a name, a path), an
  // artifact's path, an eval's checkpoint and signature. PATH_MAX on Linux.
  std::size_t max_text_bytes = 4096;
  std::size_t max_config_bytes = 1u << 20;   // a run's config: the resolved YAML text
  std::size_t max_content_bytes = 1u << 20;  // an artifact's content (a report, an SVG chart)
  // Distinct metric keys of one run: a batch that would add more is refused; points for the keys
  // the run has are always accepted.
  std::size_t max_metric_keys = 10'000;
  std::size_t max_params = 10'000;  // params of one run, over all its registrations

  // Throws std::invalid_argument naming the first field that is 0.
  void validate() const {
    const std::pair<const char*, std::size_t> values[] = {
        {"max_name_bytes", max_name_bytes},     {"max_text_bytes", max_text_bytes},
        {"max_config_bytes", max_config_bytes}, {"max_content_bytes", max_content_bytes},
        {"max_metric_keys", max_metric_keys},   {"max_params", max_params}};
    for (const auto& [name, value] : values) {
      if (value == 0) throw std::invalid_argument(fmt::format("{} must be at least 1", name));
    }
  }
};

// GET /api/series, many series in one request: at most kMaxSeriesRuns runs (400, field `runs`)
// and kMaxSeriesPerRequest run and key pairs (400, field `keys`). Each series is bounded by
// --max-response-points as a single one is, and all of them together by kSeriesPointsFactor times
// that: past it, each series is downsampled to an equal share.
inline constexpr std::size_t kMaxSeriesRuns = 50;
inline constexpr std::size_t kMaxSeriesPerRequest = 2000;
inline constexpr std::int64_t kSeriesPointsFactor = 20;

namespace limits_detail {

// `text` as an error shows it: at most 40 bytes of it.
inline std::string excerpt(std::string_view text) {
  return text.size() <= 40 ? std::string(text) : std::string(text.substr(0, 40)) + "...";
}

// `value` itself, or what an optional text holds; nullptr when it holds none (nothing to check).
inline const std::string* present(const std::string& value) {
  return &value;
}
inline const std::string* present(const std::optional<std::string>& value) {
  return value ? &*value : nullptr;
}

// FieldError at `field` when `value` (a text, or an optional one) is longer than `limit` bytes;
// `what` and `flag` name the limit.
template <typename Text>
void check_length(const Text& value, std::size_t limit, const char* what, const char* flag,
                  const std::string& field) {
  const std::string* text = present(value);
  if (text && text->size() > limit) {
    bad_field(field, fmt::format("is {} bytes long, over the limit of {} bytes for {} ({})",
                                 text->size(), limit, what, flag));
  }
}

template <typename Text>
void check_name(const Text& value, const WriteLimits& limits, const std::string& field) {
  check_length(value, limits.max_name_bytes, "names and keys", "--max-name-bytes", field);
}

template <typename Text>
void check_text(const Text& value, const WriteLimits& limits, const std::string& field) {
  check_length(value, limits.max_text_bytes, "paths and texts", "--max-text-bytes", field);
}

// A flat map of params (or provenance): how many, each key's length and each text's.
inline void check_params(const Params& params, const WriteLimits& limits,
                         const std::string& field) {
  if (params.size() > limits.max_params) {
    bad_field(field, fmt::format("has {} entries, over the limit of {} params per run "
                                 "(--max-params)",
                                 params.size(), limits.max_params));
  }
  for (const auto& [key, value] : params) {
    if (key.size() > limits.max_name_bytes) {
      bad_field(field, fmt::format("has a key of {} bytes ('{}'), over the limit of {} bytes "
                                   "for names and keys (--max-name-bytes)",
                                   key.size(), excerpt(key), limits.max_name_bytes));
    }
    if (const auto* text = std::get_if<std::string>(&value)) {
      check_text(*text, limits, field + "." + key);
    }
  }
}

}  // namespace limits_detail

// The registration's texts and the number of its params. How many params the run then holds in
// all is the store's to count (RequestHandler).
inline void check_limits(const RunRegistration& r, const WriteLimits& limits) {
  using limits_detail::check_name;
  using limits_detail::check_text;
  check_name(r.experiment, limits, "experiment");
  check_name(r.name, limits, "name");
  check_name(r.sweep, limits, "sweep");
  check_name(r.row_label, limits, "row_label");
  check_name(r.config_hash, limits, "config_hash");
  check_name(r.git_revision, limits, "git_revision");
  check_name(r.host, limits, "host");
  check_name(r.slurm_job_id, limits, "slurm_job_id");
  check_name(r.slurm_array_id, limits, "slurm_array_id");
  limits_detail::check_length(r.config, limits.max_config_bytes, "a run's config",
                              "--max-config-bytes", "config");
  limits_detail::check_params(r.params, limits, "params");
  check_text(r.run_dir, limits, "run_dir");
  limits_detail::check_params(r.provenance, limits, "provenance");
}

// Each point's key, and the number of distinct keys in the batch (a batch with more than a run may
// hold can never be stored). Returns the batch's distinct keys, for the store to count with the
// run's own.
inline std::vector<std::string> check_limits(const MetricBatch& batch, const WriteLimits& limits) {
  std::unordered_set<std::string_view> keys;
  for (std::size_t i = 0; i < batch.points.size(); ++i) {
    const std::string& key = batch.points[i].key;
    if (key.size() > limits.max_name_bytes) {
      limits_detail::check_name(key, limits, fmt::format("points[{}].key", i));
    }
    if (keys.insert(key).second && keys.size() > limits.max_metric_keys) {
      bad_field("points", fmt::format("holds more than {} distinct keys, the limit of metric keys "
                                      "per run (--max-metric-keys)",
                                      limits.max_metric_keys));
    }
  }
  return std::vector<std::string>(keys.begin(), keys.end());
}

inline void check_limits(const EvalRecord& eval, const WriteLimits& limits) {
  limits_detail::check_name(eval.split, limits, "split");
  limits_detail::check_text(eval.checkpoint, limits, "checkpoint");
  limits_detail::check_text(eval.signature, limits, "signature");
}

inline void check_limits(const ArtifactRecord& artifact, const WriteLimits& limits) {
  limits_detail::check_name(artifact.kind, limits, "kind");
  limits_detail::check_text(artifact.path, limits, "path");
  limits_detail::check_length(artifact.content, limits.max_content_bytes, "an artifact's content",
                              "--max-content-bytes", "content");
  if (artifact.content && !artifact_content_type(artifact.path)) {
    bad_field("content",
              fmt::format("is only kept for text artifacts, whose path ends in {}; "
                          "'{}' does not",
                          artifact_content_extensions(), limits_detail::excerpt(artifact.path)));
  }
}

}  // namespace nmt::tracker::api
