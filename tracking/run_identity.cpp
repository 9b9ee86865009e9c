#include "tracking/run_identity.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/atomic_file.h"
#include "common/checked_paths.h"
#include "common/json_fields.h"
#include "common/run_layout.h"
#include "tracker/api/run_rules.h"
#include "tracker/api/wire_json.h"

namespace nmt::tracking {
namespace {

// run.json is a few hundred bytes; its provenance a few kilobytes.
constexpr std::uint64_t kMaxIdentityBytes = 1u << 20;

}  // namespace

std::optional<RunIdentity> read_run_identity(const std::string& run_dir) {
  const auto path = run_layout::identity_path(run_dir);
  if (path_kind(path) == PathKind::kMissing) return std::nullopt;
  const std::string text = read_regular_file(path, kMaxIdentityBytes, "the run identity");
  RunIdentity identity;
  try {
    const auto json = nlohmann::json::parse(text);
    const Fields fields = object_fields(json, "");
    identity.uid = fields.text("uid");
    identity.attempt =
        static_cast<int>(fields.integer_in("attempt", 1, std::numeric_limits<int>::max()));
    identity.world_size =
        fields.optional_integer("world_size")
            ? static_cast<int>(fields.integer_in("world_size", 0, std::numeric_limits<int>::max()))
            : 0;
    identity.hosts = json.value("hosts", std::vector<std::string>{});
    identity.name = json.value("name", std::string());
    identity.run_dir = json.value("run_dir", std::string());
    if (json.contains("provenance")) {
      identity.provenance = tracker::api::read_params(json.at("provenance"), "provenance");
    }
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format(
        "{}: not a run identity ({}); delete it to register the run as a new one", path, e.what()));
  }
  if (!tracker::api::is_valid_run_uid(identity.uid) || identity.attempt < 1) {
    throw std::runtime_error(
        fmt::format("{}: uid '{}' or attempt {} is invalid (a uid {}; an attempt must be >= 1)",
                    path, identity.uid, identity.attempt, tracker::api::kRunUidRule));
  }
  return identity;
}

RunIdentity next_run_identity(const std::string& run_dir, bool resume) {
  namespace fs = std::filesystem;
  const fs::path here = fs::absolute(run_dir).lexically_normal();
  RunIdentity next;
  if (auto stored = resume ? read_run_identity(run_dir) : std::nullopt) {
    next = *stored;
    ++next.attempt;
    next.provenance.clear();  // the earlier attempt's; this one's is written once it is known
    if (!stored->run_dir.empty() && fs::path(stored->run_dir) != here) {
      std::optional<RunIdentity> original;
      try {
        original = read_run_identity(stored->run_dir);
      } catch (const std::exception&) {  // unreadable there: not this run's any more
      }
      std::error_code error;  // another path to this very directory (a symlink) is no copy
      const bool same_directory = fs::equivalent(stored->run_dir, here, error);
      if (original && original->uid == stored->uid && !same_directory) {
        throw std::runtime_error(fmt::format(
            "{}/{}: run uid {} is also the run in {}, where it was last trained: this directory is "
            "a copy; resume the original, or delete this {} to train the copy as a new run",
            run_dir, run_layout::kIdentityFile, stored->uid, stored->run_dir,
            run_layout::kIdentityFile));
      }
    }
  } else {
    next.uid = tracker::api::generate_run_uid();
  }
  // The name the tracker has always derived from the path given (run_tracking.cpp), so that a run
  // registered before run.json kept it resumes under the same one.
  if (next.name.empty()) next.name = fs::path(run_dir).filename().string();
  if (next.name.empty()) next.name = here.parent_path().filename().string();  // "runs/x/"
  next.run_dir = here.string();
  return next;
}

void write_run_identity(const std::string& run_dir, const RunIdentity& identity) {
  nlohmann::json json = {{"uid", identity.uid}, {"attempt", identity.attempt}};
  if (!identity.name.empty()) json["name"] = identity.name;
  if (!identity.run_dir.empty()) json["run_dir"] = identity.run_dir;
  if (identity.world_size > 0) json["world_size"] = identity.world_size;
  if (!identity.hosts.empty()) json["hosts"] = identity.hosts;
  if (!identity.provenance.empty()) {
    json["provenance"] = nlohmann::json::object();
    for (const auto& [key, value] : identity.provenance) json["provenance"][key] = value;
  }
  write_file_atomically(run_layout::identity_path(run_dir), json.dump(2) + "\n");
}

}  // namespace nmt::tracking
