#pragma once
// Everything nmt-train is told, as plain structs with the paper's base recipe as defaults, loaded
// from YAML in exactly one place (load_run_config) and checked by validate(). Nothing below main
// reads files or the environment for settings. The resolved config (to_yaml) is written into the
// run directory and every checkpoint.
//
// What each key does, and the paper's value for it, is written once, beside the key in the field
// lists of train_config.cpp, which also drive loading and writing; docs/config.md is their
// rendering (nmt-config-doc).

#include <cstdint>
#include <string>
#include <vector>

#include "common/config_reference.h"
#include "trainer/config/model_config.h"
#include "trainer/config/precision_mode.h"

namespace nmt {

struct DataConfig {
  std::string dir;
  std::string train_split = "train";
  std::string valid_split = "valid";
  std::int64_t max_src_tokens = 25000;
  std::int64_t max_tgt_tokens = 25000;
  std::int64_t max_length = 256;
  std::int64_t bucket_pool = 100;
  bool verify_checksums = false;
  void validate() const;
};

struct TrainConfig {
  std::int64_t max_steps = 100000;
  double max_minutes = 0.0;
  std::int64_t accumulation = 1;
  // 0 is resolved to accumulation x ranks when a fresh run starts; config.yaml and the
  // checkpoints hold the resolved value, which a resume keeps.
  std::int64_t update_batches = 0;
  double lr_factor = 1.0;
  std::int64_t warmup_steps = 4000;
  // trainer/optim/lr_cooldown.h. A run ended by max_minutes measures its fraction on rank 0's
  // clock: its rates then depend on the machine's speed, as its update count already does.
  double cooldown = 0.0;
  double adam_beta1 = 0.9;
  double adam_beta2 = 0.98;
  double adam_eps = 1e-9;
  double label_smoothing = 0.1;
  double clip_norm = 0.0;
  std::int64_t max_skipped_updates = 10;
  std::int64_t validate_every = 1000;
  std::int64_t valid_bleu_every = 0;
  std::int64_t valid_bleu_beam = 1;
  std::int64_t valid_bleu_sentences = 0;
  std::int64_t early_stopping = 0;
  std::int64_t log_every = 100;
  std::uint64_t seed = 1;
  std::string device = "cpu";
  bool allow_shared_gpu = false;  // runtime/device_assignment.h
  runtime::Precision precision = runtime::Precision::kAuto;
  int threads = 0;
  void validate() const;
};

struct CheckpointConfig {
  std::int64_t every_steps = 1000;
  double every_minutes = 0.0;
  std::int64_t keep_last = 5;
  void validate() const;
};

// Read by nmt-average (--run-dir), nmt-translate and nmt-evaluate from the run's config.yaml or
// the checkpoint.
struct DecodeConfig {
  std::int64_t average_last = 5;
  std::int64_t beam = 4;
  double alpha = 0.6;
  void validate() const;
};

enum class DistBackend { kAuto, kMpi, kMpiStaged, kNccl };
DistBackend parse_dist_backend(const std::string& name);  // std::invalid_argument listing choices
const char* dist_backend_name(DistBackend backend);

struct DistConfig {
  DistBackend backend = DistBackend::kAuto;
  double bucket_mb = 25.0;
  bool overlap = true;
  double hang_timeout_s = 45.0;
  double root_work_timeout_s = 1800.0;
  void validate() const;
};

// The daemon's address, token and CA file are resolved by tracker/client/daemon_address.h, which
// ranks a tool's flags, these fields and the environment.
struct TrackerConfig {
  std::string url;
  std::string port_file;
  std::string token_file;
  std::string ca_file;
  std::string experiment = "default";
  std::string run_name;
  std::string sweep;
  std::string row_label;
  std::int64_t row_index = -1;
  double ref_ppl = 0, ref_bleu = 0, ref_params = 0;
  double heartbeat_s = 30;
  void validate() const;
};

struct RunConfig {
  model::ModelConfig model;
  DataConfig data;
  TrainConfig train;
  CheckpointConfig checkpoint;
  DecodeConfig decode;
  DistConfig dist;
  TrackerConfig tracker;
  void validate() const;
};

// Loads `path` (may be empty: all defaults) and applies --set overrides ("model.d_model=256").
// Unknown keys and wrong types are ConfigErrors naming file, line and key.
RunConfig load_run_config(const std::string& path, const std::vector<std::string>& overrides = {});
// Parses YAML text written by to_yaml (the copy inside a checkpoint).
RunConfig parse_run_config(const std::string& yaml, const std::string& source);

std::string to_yaml(const RunConfig& config);
std::string to_yaml(const model::ModelConfig& model);

// Every key of the run config, section by section, with the defaults of RunConfig{}.
ConfigReference run_config_reference();

}  // namespace nmt
