#include "tracking/run_identity.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/atomic_file.h"
#include "tracker/api/run_rules.h"

namespace nmt::train {
namespace {

std::string identity_path(const std::string& run_dir) {
  return (std::filesystem::path(run_dir) / kRunIdentityFile).string();
}

}  // namespace

std::optional<RunIdentity> read_run_identity(const std::string& run_dir) {
  const auto path = identity_path(run_dir);
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  RunIdentity identity;
  try {
    const auto json = nlohmann::json::parse(text.str());
    identity.uid = json.at("uid").get<std::string>();
    identity.attempt = json.at("attempt").get<int>();
    identity.world_size = json.value("world_size", 0);
    identity.hosts = json.value("hosts", std::vector<std::string>{});
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
  if (resume) {
    if (auto stored = read_run_identity(run_dir)) {
      ++stored->attempt;
      return *stored;
    }
  }
  RunIdentity fresh;
  fresh.uid = tracker::api::generate_run_uid();
  return fresh;
}

void write_run_identity(const std::string& run_dir, const RunIdentity& identity) {
  nlohmann::json json = {{"uid", identity.uid}, {"attempt", identity.attempt}};
  if (identity.world_size > 0) json["world_size"] = identity.world_size;
  if (!identity.hosts.empty()) json["hosts"] = identity.hosts;
  write_file_atomically(identity_path(run_dir), json.dump(2) + "\n");
}

}  // namespace nmt::train
