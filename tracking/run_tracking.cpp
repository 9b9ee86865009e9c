#include "tracking/run_tracking.h"

#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <thread>

#include "common/run_layout.h"
#include "common/sha256.h"

namespace nmt::tracking {
namespace {

// A config scalar as a param: numbers as numbers, bools as true/false, the rest as text.
tracker::api::ParamValue scalar_param(const YAML::Node& node) {
  const std::string text = node.Scalar();
  if (text == "true" || text == "false") return text;  // the daemon keeps 1/0 beside, for filters
  try {
    std::size_t used = 0;
    const double number = std::stod(text, &used);
    if (used == text.size()) return number;
  } catch (const std::exception&) {
  }
  return text;
}

}  // namespace

tracker::api::Params flatten_params(const RunConfig& config, std::int64_t parameter_count) {
  tracker::api::Params params;
  const YAML::Node root = YAML::Load(to_yaml(config));
  for (const auto& section : root) {
    const std::string name = section.first.Scalar();
    if (name == "tracker") continue;
    for (const auto& entry : section.second) {
      params[name + "." + entry.first.Scalar()] = scalar_param(entry.second);
    }
  }
  params["model.parameter_count"] = static_cast<double>(parameter_count);
  // A sweep row's reference figures (the paper's, from the sweep spec's `reference`, which
  // nmt-sweep passes as tracker.ref_*), shown beside ours in the ablation table as the
  // `reference.*` columns (tracker/API.md).
  const auto& t = config.tracker;
  if (t.ref_ppl > 0) params["reference.ppl"] = t.ref_ppl;
  if (t.ref_bleu > 0) params["reference.bleu"] = t.ref_bleu;
  if (t.ref_params > 0) params["reference.params"] = t.ref_params;
  return params;
}

tracker::api::Params provenance_params(const RunProvenance& p, const RunConfig& config) {
  tracker::api::Params entries;
  const auto text = [&](const char* key, const std::string& value) {
    if (!value.empty()) entries[key] = value;
  };
  text("command_line", p.command_line);
  text("git.revision", p.git_revision);
  if (!p.git_revision.empty()) entries["git.dirty"] = std::string(p.git_dirty ? "true" : "false");
  text("git.diff_sha256", p.git_diff_sha256);
  std::string hosts;
  for (const auto& host : p.hosts) hosts += (hosts.empty() ? "" : ",") + host;
  text("hosts", hosts.empty() ? p.host : hosts);
  entries["world_size"] = static_cast<double>(p.world_size);
  text("precision", runtime::precision_name(config.train.precision));
  text("precision.reason", p.precision_reason);
  text("slurm.job_id", p.slurm_job_id);
  text("slurm.array_id", p.slurm_array_id);
  for (const auto& [key, value] : p.environment) text(key.c_str(), value);
  return entries;
}

tracker::RunInfo run_registration(const RunConfig& config, const std::string& config_text,
                                  const std::string& run_dir, const RunIdentity& identity,
                                  std::int64_t parameter_count) {
  const auto& t = config.tracker;
  tracker::RunInfo info;
  info.experiment = t.experiment;
  info.uid = identity.uid;
  info.attempt = identity.attempt;
  // The name it was registered under (run.json) where no run_name is given, so that a moved
  // directory resumes its own run rather than conflict with it.
  info.name = !t.run_name.empty()      ? t.run_name
              : !identity.name.empty() ? identity.name
                                       : std::filesystem::path(run_dir).filename().string();
  if (!t.sweep.empty()) info.sweep = t.sweep;
  if (!t.row_label.empty()) info.row_label = t.row_label;
  if (t.row_index >= 0) info.row_index = t.row_index;
  info.config = config_text;
  info.config_hash = sha256_hex(config_text);
  // The attempt's host: every host of a multi-node run, comma-separated, rank 0's first.
  if (!identity.hosts.empty()) {
    std::string hosts = identity.hosts.front();
    for (std::size_t i = 1; i < identity.hosts.size(); ++i) hosts += "," + identity.hosts[i];
    info.host = hosts;
  }
  if (identity.world_size > 0) info.world_size = identity.world_size;
  info.params = flatten_params(config, parameter_count);
  info.run_dir = std::filesystem::absolute(run_dir).lexically_normal().string();
  info.provenance = identity.provenance;
  return info;
}

namespace {

tracker::ClientOptions client_options(const tracker::DaemonAddress& daemon,
                                      const std::string& spool_dir, int rank) {
  tracker::ClientOptions options;
  options.url = daemon.url;
  options.token = daemon.token;
  options.ca_file = daemon.ca_file;
  options.rank = rank;
  options.spool_path = run_layout::spool_path(spool_dir, rank);
  return options;
}

}  // namespace

std::vector<tracker::DaemonSource> daemon_sources(const tracker::DaemonSettings& flags,
                                                  const TrackerConfig& config) {
  return {
      {flags, tracker::kTrainerFlagNames},
      {{config.url, config.port_file, config.token_file, config.ca_file}, tracker::kConfigNames}};
}

void record_daemon_flags(const tracker::DaemonSettings& flags, TrackerConfig& config) {
  if (tracker::is_given(flags.url) || tracker::is_given(flags.port_file)) {
    config.url = flags.url;
    config.port_file = flags.port_file;
  }
  if (tracker::is_given(flags.token_file)) config.token_file = flags.token_file;
  if (tracker::is_given(flags.ca_file)) config.ca_file = flags.ca_file;
}

void resend_recorded_metrics(tracker::TrackerClient& client,
                             const std::vector<MetricRecord>& recorded) {
  if (recorded.empty()) return;
  const std::size_t half = client.options().queue_capacity / 2;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(2);
  std::size_t sent = 0;
  for (const auto& record : recorded) {
    if (!record.value) continue;
    // The worker empties the queue every round, to the daemon or to the spool.
    while (client.stats().queued >= half && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    client.log_metric(record.key, record.step, *record.value, record.time);
    ++sent;
  }
  spdlog::info("tracker: sent the {} recorded points of steps up to {} again (metrics.jsonl)", sent,
               recorded.back().step);
}

std::shared_ptr<tracker::TrackerClient> connect_tracker(const RunConfig& config,
                                                        const std::string& run_dir,
                                                        std::int64_t parameter_count,
                                                        const RunProvenance& provenance,
                                                        const RunIdentity& identity,
                                                        const tracker::DaemonAddress& daemon) {
  auto options = client_options(daemon, run_dir, provenance.rank);
  options.heartbeat_interval =
      std::chrono::milliseconds(static_cast<std::int64_t>(config.tracker.heartbeat_s * 1000));
  auto client = std::make_shared<tracker::TrackerClient>(options);
  tracker::RunInfo info =
      run_registration(config, to_yaml(config), run_dir, identity, parameter_count);
  if (!info.host) info.host = provenance.host;
  info.git_revision = provenance.git_revision;
  info.slurm_job_id = provenance.slurm_job_id;  // the client leaves empty texts out
  info.slurm_array_id = provenance.slurm_array_id;
  const auto id = client->start_run(info);
  if (id) {
    spdlog::info("tracker: run {} ({} / {}, attempt {}) at {} (from {})", *id, info.experiment,
                 info.name, identity.attempt, options.url, daemon.url_from);
  }
  return client;
}

}  // namespace nmt::tracking
