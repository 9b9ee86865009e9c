#include "trainer/train/run_tracking.h"

#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>

#include "common/sha256.h"

namespace nmt::train {
namespace {

nlohmann::json scalar_json(const YAML::Node& node) {
  const std::string text = node.Scalar();
  if (text == "true" || text == "false") return text == "true";
  try {
    std::size_t used = 0;
    const double number = std::stod(text, &used);
    if (used == text.size()) return number;
  } catch (const std::exception&) {
  }
  return text;
}

std::string read_trimmed(const std::string& path, const char* what) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot read the tracker " + what);
  std::string text;
  std::getline(in, text);
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' '))
    text.pop_back();
  return text;
}

std::string tracker_url(const TrackerConfig& t) {
  if (!t.url.empty()) return t.url;
  return "http://127.0.0.1:" + read_trimmed(t.port_file, "port file");
}

}  // namespace

nlohmann::json flatten_params(const RunConfig& config, std::int64_t parameter_count) {
  nlohmann::json params = nlohmann::json::object();
  const YAML::Node root = YAML::Load(to_yaml(config));
  for (const auto& section : root) {
    const std::string name = section.first.Scalar();
    if (name == "tracker") continue;
    for (const auto& entry : section.second) {
      params[name + "." + entry.first.Scalar()] = scalar_json(entry.second);
    }
  }
  params["model.parameter_count"] = parameter_count;
  return params;
}

std::shared_ptr<tracker::TrackerClient> connect_tracker(const RunConfig& config,
                                                        const std::string& run_dir,
                                                        std::int64_t parameter_count,
                                                        const RunProvenance& provenance) {
  const auto& t = config.tracker;
  tracker::ClientOptions options;
  options.url = tracker_url(t);
  if (!t.token_file.empty()) options.token = read_trimmed(t.token_file, "token file");
  options.rank = provenance.rank;
  options.spool_path =
      (std::filesystem::path(run_dir) / fmt::format("tracker-spool-rank{}.jsonl", provenance.rank))
          .string();
  auto client = std::make_shared<tracker::TrackerClient>(options);
  tracker::RunInfo info;
  info.experiment = t.experiment;
  info.name = !t.run_name.empty() ? t.run_name : std::filesystem::path(run_dir).filename().string();
  info.sweep = t.sweep;
  info.row_label = t.row_label;
  if (t.row_index >= 0) info.row_index = static_cast<int>(t.row_index);
  info.config = to_yaml(config);
  info.config_hash = sha256_hex(info.config);
  info.git_revision = provenance.git_revision;
  info.host = provenance.host;
  info.world_size = provenance.world_size;
  info.slurm_job_id = provenance.slurm_job_id;
  info.slurm_array_id = provenance.slurm_array_id;
  info.params = flatten_params(config, parameter_count);
  const auto id = client->start_run(info);
  if (id)
    spdlog::info("tracker: run {} ({} / {}) at {}", *id, info.experiment, info.name, options.url);
  return client;
}

}  // namespace nmt::train
