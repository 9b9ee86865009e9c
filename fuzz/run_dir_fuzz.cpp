// Fuzz harness: a training run directory as `nmt-tracker sync` reads it
// (tracking/run_dir_record.h): run.json, config.yaml, metrics.jsonl (common/metrics_log.h) and
// a client spool (tracker/client/spool.h). The input is
//   RUN_JSON <RS> CONFIG_YAML <RS> METRICS_JSONL <RS> SPOOL <RS> OTHER_FILE_NAMES
// where OTHER_FILE_NAMES (one a line) are empty files beside them (checkpoints/step-N.h5, other
// spools...). Expected: std::runtime_error naming the file (ConfigError among them),
// std::invalid_argument, or a FieldError. Checked: the metric batches sync builds from
// metrics.jsonl are requests the daemon's protocol reads.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>

#include "common/json_fields.h"
#include "common/metrics_log.h"
#include "fuzz/fuzz_input.h"
#include "tracker/api/wire_json.h"
#include "tracker/client/spool.h"
#include "tracking/run_dir_record.h"

namespace {

namespace api = nmt::tracker::api;
namespace fs = std::filesystem;

// The spool's entries as sync reads them: each body is the JSON of its kind's request.
void read_spool(const std::string& path) {
  const nmt::tracker::Spool spool(path);
  for (const auto& entry : spool.entries()) {
    try {
      const nlohmann::json body = nlohmann::json::parse(entry.body);
      if (entry.kind == "status") (void)api::parse<api::StatusUpdate>(body);
      if (entry.kind == "metrics") (void)api::parse<api::MetricBatch>(body);
      if (entry.kind == "evals") (void)api::parse<api::EvalRecord>(body);
      if (entry.kind == "artifacts") (void)api::parse<api::ArtifactRecord>(body);
    } catch (const nlohmann::json::exception&) {
    } catch (const nmt::FieldError&) {
    }
    (void)nmt::tracker::decode_spool_entry(nmt::tracker::encode_spool_entry(entry));
  }
}

// metrics.jsonl in batches, each turned into the request sync sends.
void read_metrics_log(const std::string& path) {
  nmt::MetricsLogReader reader(path);
  for (;;) {
    const auto batch = reader.next_batch(7);
    if (batch.empty()) break;
    api::MetricBatch request;
    request.rank = 0;
    request.sequence = 1;
    for (const auto& line : batch) {
      if (line.value) request.points.push_back({line.key, line.step, *line.value, line.time});
    }
    if (request.points.empty()) continue;
    const nlohmann::json body = request;
    try {
      (void)api::parse<api::MetricBatch>(body);
    } catch (const nmt::FieldError& e) {
      nmt::fuzz::finding("metrics.jsonl lines that read make a batch the protocol refuses: " +
                         std::string(e.what()) + "\n" + body.dump());
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nmt::fuzz::quiet_logs();
  const auto parts = nmt::fuzz::split_parts(nmt::fuzz::as_text(data, size), 5);
  const auto& scratch = nmt::fuzz::scratch();
  scratch.clear();
  const fs::path dir = scratch.path() / "run";
  scratch.write("run/run.json", parts[0]);
  scratch.write("run/config.yaml", parts[1]);
  const std::string metrics = scratch.write("run/metrics.jsonl", parts[2]);
  scratch.write("run/tracker-spool-rank0.jsonl", parts[3]);
  std::istringstream names(parts[4]);
  for (std::string name; std::getline(names, name);) {
    // Names inside the run directory only, and short enough for the file system.
    if (name.empty() || name.size() > 200 || name.find("..") != std::string::npos ||
        name.front() == '/' || name.find('\0') != std::string::npos) {
      continue;
    }
    try {
      scratch.write("run/" + name, "");
    } catch (const std::exception&) {
    }
  }
  try {
    const auto record = nmt::tracking::read_run_dir(dir.string());
    std::vector<std::string> problems;
    (void)nmt::tracking::run_dir_artifacts(dir.string(), problems);
    (void)nmt::tracking::status_from_run_dir(record);
    (void)nlohmann::json(record.registration).dump();
    for (const auto& spool : record.spool_files) read_spool(spool);
  } catch (const std::runtime_error&) {
  } catch (const std::invalid_argument&) {
  }
  try {
    read_spool((dir / "tracker-spool-rank0.jsonl").string());
  } catch (const std::runtime_error&) {
  } catch (const std::invalid_argument&) {
  }
  try {
    read_metrics_log(metrics);
  } catch (const std::runtime_error&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
