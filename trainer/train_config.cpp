#include "trainer/train_config.h"

#include <yaml-cpp/yaml.h>

#include <stdexcept>

#include "common/config_loader.h"

namespace nmt {
namespace {

void require(bool ok, const std::string& field, const std::string& what) {
  if (!ok) throw std::invalid_argument(field + ": " + what);
}

void load_model(const ConfigSection& s, model::ModelConfig& m) {
  s.read("vocab_size", m.vocab_size);
  s.read("layers", m.layers);
  s.read("d_model", m.d_model);
  s.read("d_ff", m.d_ff);
  s.read("heads", m.heads);
  s.read("d_k", m.d_k);
  s.read("d_v", m.d_v);
  s.read("dropout", m.dropout);
  s.read("attention_dropout", m.attention_dropout);
  s.read("ffn_dropout", m.ffn_dropout);
  s.read("positions", m.positions);
  s.read("max_positions", m.max_positions);
  s.read("norm", m.norm);
  s.read("embedding_sharing", m.embedding_sharing);
  s.read("layer_norm_eps", m.layer_norm_eps);
  s.finish();
}

void load_data(const ConfigSection& s, DataConfig& d) {
  s.read("dir", d.dir);
  s.read("train_split", d.train_split);
  s.read("valid_split", d.valid_split);
  s.read("max_src_tokens", d.max_src_tokens);
  s.read("max_tgt_tokens", d.max_tgt_tokens);
  s.read("max_length", d.max_length);
  s.read("bucket_pool", d.bucket_pool);
  s.finish();
}

void load_train(const ConfigSection& s, TrainConfig& t) {
  s.read("max_steps", t.max_steps);
  s.read("accumulation", t.accumulation);
  s.read("lr_factor", t.lr_factor);
  s.read("warmup_steps", t.warmup_steps);
  s.read("adam_beta1", t.adam_beta1);
  s.read("adam_beta2", t.adam_beta2);
  s.read("adam_eps", t.adam_eps);
  s.read("label_smoothing", t.label_smoothing);
  s.read("clip_norm", t.clip_norm);
  s.read("validate_every", t.validate_every);
  s.read("valid_bleu_every", t.valid_bleu_every);
  s.read("valid_bleu_beam", t.valid_bleu_beam);
  s.read("valid_bleu_sentences", t.valid_bleu_sentences);
  s.read("early_stopping", t.early_stopping);
  s.read("log_every", t.log_every);
  std::int64_t seed = static_cast<std::int64_t>(t.seed);
  s.read("seed", seed);
  t.seed = static_cast<std::uint64_t>(seed);
  s.read("device", t.device);
  s.read("precision", t.precision);
  s.read("threads", t.threads);
  s.finish();
}

void load_checkpoint(const ConfigSection& s, CheckpointConfig& c) {
  s.read("every_steps", c.every_steps);
  s.read("every_minutes", c.every_minutes);
  s.read("keep_last", c.keep_last);
  s.finish();
}

void load_dist(const ConfigSection& s, DistConfig& d) {
  s.read("backend", d.backend);
  s.read("bucket_mb", d.bucket_mb);
  s.read("overlap", d.overlap);
  s.read("hang_timeout_s", d.hang_timeout_s);
  s.read("root_work_timeout_s", d.root_work_timeout_s);
  s.finish();
}

void load_tracker(const ConfigSection& s, TrackerConfig& t) {
  s.read("url", t.url);
  s.read("port_file", t.port_file);
  s.read("token_file", t.token_file);
  s.read("experiment", t.experiment);
  s.read("run_name", t.run_name);
  s.read("sweep", t.sweep);
  s.read("row_label", t.row_label);
  s.read("row_index", t.row_index);
  s.read("ref_ppl", t.ref_ppl);
  s.read("ref_bleu", t.ref_bleu);
  s.read("ref_params", t.ref_params);
  s.finish();
}

RunConfig load_root(const YAML::Node& root, const std::string& source) {
  RunConfig config;
  ConfigSection top(root, source);
  load_model(top.section("model"), config.model);
  load_data(top.section("data"), config.data);
  load_train(top.section("train"), config.train);
  load_checkpoint(top.section("checkpoint"), config.checkpoint);
  load_dist(top.section("dist"), config.dist);
  load_tracker(top.section("tracker"), config.tracker);
  top.finish();
  return config;
}

}  // namespace

void DataConfig::validate() const {
  require(max_src_tokens > 0 && max_tgt_tokens > 0, "data.max_src_tokens",
          "token budgets must be positive");
  require(max_length >= 3, "data.max_length", "must be at least 3 (BOS/EOS and one token)");
  require(bucket_pool >= 1, "data.bucket_pool", "must be positive");
  require(!train_split.empty(), "data.train_split", "must name a split");
}

void TrainConfig::validate() const {
  require(max_steps >= 1, "train.max_steps", "must be positive");
  require(accumulation >= 1, "train.accumulation", "must be positive");
  require(lr_factor > 0, "train.lr_factor", "must be positive");
  require(warmup_steps >= 1, "train.warmup_steps", "must be positive");
  require(adam_beta1 >= 0 && adam_beta1 < 1 && adam_beta2 >= 0 && adam_beta2 < 1,
          "train.adam_beta1", "betas must be in [0, 1)");
  require(adam_eps > 0, "train.adam_eps", "must be positive");
  require(label_smoothing >= 0 && label_smoothing < 1, "train.label_smoothing",
          "must be in [0, 1)");
  require(clip_norm >= 0, "train.clip_norm", "must be >= 0");
  require(valid_bleu_every >= 0 && valid_bleu_beam >= 1 && valid_bleu_sentences >= 0,
          "train.valid_bleu_every",
          "valid_bleu_every, valid_bleu_sentences >= 0, valid_bleu_beam >= 1");
  require(validate_every >= 0 && early_stopping >= 0 && log_every >= 1, "train.validate_every",
          "validate_every and early_stopping must be >= 0, log_every >= 1");
  require(precision == "fp32" || precision == "bf16" || precision == "fp16", "train.precision",
          "expected fp32, bf16 or fp16, got '" + precision + "'");
  require(threads >= 0, "train.threads", "must be >= 0");
}

void CheckpointConfig::validate() const {
  require(every_steps >= 0 && every_minutes >= 0, "checkpoint.every_steps", "must be >= 0");
  require(keep_last >= 1, "checkpoint.keep_last", "must keep at least one checkpoint");
}

void DistConfig::validate() const {
  require(backend == "auto" || backend == "mpi" || backend == "mpi-staged" || backend == "nccl",
          "dist.backend", "expected auto, mpi, mpi-staged or nccl, got '" + backend + "'");
  require(bucket_mb > 0, "dist.bucket_mb", "must be positive");
  require(hang_timeout_s > 0 && root_work_timeout_s >= hang_timeout_s, "dist.hang_timeout_s",
          "must be positive and at most dist.root_work_timeout_s");
}

void RunConfig::validate() const {
  model.validate();
  data.validate();
  train.validate();
  checkpoint.validate();
  dist.validate();
}

RunConfig load_run_config(const std::string& path, const std::vector<std::string>& overrides) {
  YAML::Node root = path.empty() ? YAML::Node(YAML::NodeType::Map) : load_yaml_file(path);
  for (const auto& o : overrides) apply_override(root, o);
  return load_root(root, path.empty() ? "--set" : path);
}

RunConfig parse_run_config(const std::string& yaml, const std::string& source) {
  try {
    return load_root(YAML::Load(yaml), source);
  } catch (const YAML::Exception& e) {
    throw ConfigError(source + ": cannot parse the stored config: " + e.msg);
  }
}

std::string to_yaml(const model::ModelConfig& m) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "vocab_size" << YAML::Value << m.vocab_size << YAML::Key
      << "layers" << YAML::Value << m.layers << YAML::Key << "d_model" << YAML::Value << m.d_model
      << YAML::Key << "d_ff" << YAML::Value << m.d_ff << YAML::Key << "heads" << YAML::Value
      << m.heads << YAML::Key << "d_k" << YAML::Value << m.d_k << YAML::Key << "d_v" << YAML::Value
      << m.d_v << YAML::Key << "dropout" << YAML::Value << m.dropout << YAML::Key
      << "attention_dropout" << YAML::Value << m.attention_dropout << YAML::Key << "ffn_dropout"
      << YAML::Value << m.ffn_dropout << YAML::Key << "positions" << YAML::Value << m.positions
      << YAML::Key << "max_positions" << YAML::Value << m.max_positions << YAML::Key << "norm"
      << YAML::Value << m.norm << YAML::Key << "embedding_sharing" << YAML::Value
      << m.embedding_sharing << YAML::Key << "layer_norm_eps" << YAML::Value << m.layer_norm_eps
      << YAML::EndMap;
  return out.c_str();
}

std::string to_yaml(const RunConfig& c) {
  const auto& d = c.data;
  const auto& t = c.train;
  const auto& k = c.checkpoint;
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "model" << YAML::Value << YAML::Load(to_yaml(c.model));
  out << YAML::Key << "data" << YAML::Value << YAML::BeginMap << YAML::Key << "dir" << YAML::Value
      << d.dir << YAML::Key << "train_split" << YAML::Value << d.train_split << YAML::Key
      << "valid_split" << YAML::Value << d.valid_split << YAML::Key << "max_src_tokens"
      << YAML::Value << d.max_src_tokens << YAML::Key << "max_tgt_tokens" << YAML::Value
      << d.max_tgt_tokens << YAML::Key << "max_length" << YAML::Value << d.max_length << YAML::Key
      << "bucket_pool" << YAML::Value << d.bucket_pool << YAML::EndMap;
  out << YAML::Key << "train" << YAML::Value << YAML::BeginMap << YAML::Key << "max_steps"
      << YAML::Value << t.max_steps << YAML::Key << "accumulation" << YAML::Value << t.accumulation
      << YAML::Key << "lr_factor" << YAML::Value << t.lr_factor << YAML::Key << "warmup_steps"
      << YAML::Value << t.warmup_steps << YAML::Key << "adam_beta1" << YAML::Value << t.adam_beta1
      << YAML::Key << "adam_beta2" << YAML::Value << t.adam_beta2 << YAML::Key << "adam_eps"
      << YAML::Value << t.adam_eps << YAML::Key << "label_smoothing" << YAML::Value
      << t.label_smoothing << YAML::Key << "clip_norm" << YAML::Value << t.clip_norm << YAML::Key
      << "validate_every" << YAML::Value << t.validate_every << YAML::Key << "valid_bleu_every"
      << YAML::Value << t.valid_bleu_every << YAML::Key << "valid_bleu_beam" << YAML::Value
      << t.valid_bleu_beam << YAML::Key << "valid_bleu_sentences" << YAML::Value
      << t.valid_bleu_sentences << YAML::Key << "early_stopping" << YAML::Value << t.early_stopping
      << YAML::Key << "log_every" << YAML::Value << t.log_every << YAML::Key << "seed"
      << YAML::Value << t.seed << YAML::Key << "device" << YAML::Value << t.device << YAML::Key
      << "precision" << YAML::Value << t.precision << YAML::Key << "threads" << YAML::Value
      << t.threads << YAML::EndMap;
  out << YAML::Key << "checkpoint" << YAML::Value << YAML::BeginMap << YAML::Key << "every_steps"
      << YAML::Value << k.every_steps << YAML::Key << "every_minutes" << YAML::Value
      << k.every_minutes << YAML::Key << "keep_last" << YAML::Value << k.keep_last << YAML::EndMap;
  const auto& p = c.dist;
  out << YAML::Key << "dist" << YAML::Value << YAML::BeginMap << YAML::Key << "backend"
      << YAML::Value << p.backend << YAML::Key << "bucket_mb" << YAML::Value << p.bucket_mb
      << YAML::Key << "overlap" << YAML::Value << p.overlap << YAML::Key << "hang_timeout_s"
      << YAML::Value << p.hang_timeout_s << YAML::Key << "root_work_timeout_s" << YAML::Value
      << p.root_work_timeout_s << YAML::EndMap;
  const auto& r = c.tracker;
  out << YAML::Key << "tracker" << YAML::Value << YAML::BeginMap << YAML::Key << "url"
      << YAML::Value << r.url << YAML::Key << "port_file" << YAML::Value << r.port_file << YAML::Key
      << "token_file" << YAML::Value << r.token_file << YAML::Key << "experiment" << YAML::Value
      << r.experiment << YAML::Key << "run_name" << YAML::Value << r.run_name << YAML::Key
      << "sweep" << YAML::Value << r.sweep << YAML::Key << "row_label" << YAML::Value << r.row_label
      << YAML::Key << "row_index" << YAML::Value << r.row_index << YAML::Key << "ref_ppl"
      << YAML::Value << r.ref_ppl << YAML::Key << "ref_bleu" << YAML::Value << r.ref_bleu
      << YAML::Key << "ref_params" << YAML::Value << r.ref_params << YAML::EndMap;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace nmt
