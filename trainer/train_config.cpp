#include "trainer/train_config.h"

#include <yaml-cpp/yaml.h>

#include <stdexcept>
#include <type_traits>

#include "common/config_loader.h"
#include "common/named_choices.h"

namespace nmt {
namespace {

void require(bool ok, const std::string& field, const std::string& what) {
  if (!ok) throw std::invalid_argument(field + ": " + what);
}

// Every config field, declared once. Loading, to_yaml (hence config.yaml, the config inside each
// checkpoint, the checkpoint's model diff and the tracker's params) all walk these lists.
template <typename V>
void fields(V& v, model::ModelConfig& m) {
  v("vocab_size", m.vocab_size);
  v("layers", m.layers);
  v("d_model", m.d_model);
  v("d_ff", m.d_ff);
  v("heads", m.heads);
  v("d_k", m.d_k);
  v("d_v", m.d_v);
  v("dropout", m.dropout);
  v("attention_dropout", m.attention_dropout);
  v("ffn_dropout", m.ffn_dropout);
  v("positions", m.positions);
  v("max_positions", m.max_positions);
  v("norm", m.norm);
  v("embedding_sharing", m.embedding_sharing);
  v("layer_norm_eps", m.layer_norm_eps);
}

template <typename V>
void fields(V& v, DataConfig& d) {
  v("dir", d.dir);
  v("train_split", d.train_split);
  v("valid_split", d.valid_split);
  v("max_src_tokens", d.max_src_tokens);
  v("max_tgt_tokens", d.max_tgt_tokens);
  v("max_length", d.max_length);
  v("bucket_pool", d.bucket_pool);
  v("verify_checksums", d.verify_checksums);
}

template <typename V>
void fields(V& v, TrainConfig& t) {
  v("max_steps", t.max_steps);
  v("max_minutes", t.max_minutes);
  v("accumulation", t.accumulation);
  v("update_batches", t.update_batches);
  v("lr_factor", t.lr_factor);
  v("warmup_steps", t.warmup_steps);
  v("cooldown", t.cooldown);
  v("adam_beta1", t.adam_beta1);
  v("adam_beta2", t.adam_beta2);
  v("adam_eps", t.adam_eps);
  v("label_smoothing", t.label_smoothing);
  v("clip_norm", t.clip_norm);
  v("max_skipped_updates", t.max_skipped_updates);
  v("validate_every", t.validate_every);
  v("valid_bleu_every", t.valid_bleu_every);
  v("valid_bleu_beam", t.valid_bleu_beam);
  v("valid_bleu_sentences", t.valid_bleu_sentences);
  v("early_stopping", t.early_stopping);
  v("log_every", t.log_every);
  v("seed", t.seed);
  v("device", t.device);
  v("allow_shared_gpu", t.allow_shared_gpu);
  v("precision", t.precision);
  v("threads", t.threads);
}

template <typename V>
void fields(V& v, CheckpointConfig& c) {
  v("every_steps", c.every_steps);
  v("every_minutes", c.every_minutes);
  v("keep_last", c.keep_last);
}

template <typename V>
void fields(V& v, DecodeConfig& d) {
  v("average_last", d.average_last);
  v("beam", d.beam);
  v("alpha", d.alpha);
}

template <typename V>
void fields(V& v, DistConfig& d) {
  v("backend", d.backend);
  v("bucket_mb", d.bucket_mb);
  v("overlap", d.overlap);
  v("hang_timeout_s", d.hang_timeout_s);
  v("root_work_timeout_s", d.root_work_timeout_s);
}

template <typename V>
void fields(V& v, TrackerConfig& t) {
  v("url", t.url);
  v("port_file", t.port_file);
  v("token_file", t.token_file);
  v("ca_file", t.ca_file);
  v("experiment", t.experiment);
  v("run_name", t.run_name);
  v("sweep", t.sweep);
  v("row_label", t.row_label);
  v("row_index", t.row_index);
  v("ref_ppl", t.ref_ppl);
  v("ref_bleu", t.ref_bleu);
  v("ref_params", t.ref_params);
}

template <typename V>
void sections(V& v, RunConfig& c) {
  v("model", c.model);
  v("data", c.data);
  v("train", c.train);
  v("checkpoint", c.checkpoint);
  v("decode", c.decode);
  v("dist", c.dist);
  v("tracker", c.tracker);
}

template <typename Enum>
const char* name_of(Enum value) {
  return model::enum_name(value);
}

// Reads one section's fields; enums go through their one parser, errors located at the key.
struct FieldReader {
  const ConfigSection& s;
  template <typename T>
  void operator()(const char* key, T& value) const {
    s.read(key, value);
  }
  void operator()(const char* key, std::uint64_t& value) const {
    auto signed_value = static_cast<std::int64_t>(value);
    s.read(key, signed_value);
    if (signed_value < 0) throw s.error(key, "must be >= 0");
    value = static_cast<std::uint64_t>(signed_value);
  }
  template <typename Enum, typename Parse, typename Name>
  void choice(const char* key, Enum& value, Parse parse, Name name) const {
    std::string text = name(value);
    s.read(key, text);
    try {
      value = parse(text);
    } catch (const std::invalid_argument& e) {
      throw s.error(key, e.what());
    }
  }
  void operator()(const char* key, runtime::Precision& value) const {
    choice(key, value, runtime::parse_precision, runtime::precision_name);
  }
  void operator()(const char* key, DistBackend& value) const {
    choice(key, value, parse_dist_backend, dist_backend_name);
  }
  void operator()(const char* key, model::Positions& value) const {
    choice(key, value, model::parse_positions, name_of<model::Positions>);
  }
  void operator()(const char* key, model::NormPlacement& value) const {
    choice(key, value, model::parse_norm, name_of<model::NormPlacement>);
  }
  void operator()(const char* key, model::EmbeddingSharing& value) const {
    choice(key, value, model::parse_embedding_sharing, name_of<model::EmbeddingSharing>);
  }
};

struct SectionReader {
  const ConfigSection& top;
  template <typename Section>
  void operator()(const char* key, Section& section) const {
    const ConfigSection s = top.section(key);
    FieldReader reader{s};
    fields(reader, section);
    s.finish();
  }
};

struct FieldWriter {
  YAML::Emitter& out;
  template <typename T, typename = std::enable_if_t<!std::is_enum_v<T>>>
  void operator()(const char* key, const T& value) const {
    out << YAML::Key << key << YAML::Value << value;
  }
  void operator()(const char* key, const runtime::Precision& value) const {
    out << YAML::Key << key << YAML::Value << runtime::precision_name(value);
  }
  void operator()(const char* key, const DistBackend& value) const {
    out << YAML::Key << key << YAML::Value << dist_backend_name(value);
  }
  template <typename Enum, typename = std::enable_if_t<std::is_enum_v<Enum>>, typename = void>
  void operator()(const char* key, const Enum& value) const {
    out << YAML::Key << key << YAML::Value << model::enum_name(value);
  }
};

template <typename Section>
void write_section(YAML::Emitter& out, Section section) {
  FieldWriter writer{out};
  out << YAML::BeginMap;
  fields(writer, section);
  out << YAML::EndMap;
}

struct SectionWriter {
  YAML::Emitter& out;
  template <typename Section>
  void operator()(const char* key, const Section& section) const {
    out << YAML::Key << key << YAML::Value;
    write_section(out, section);
  }
};

RunConfig load_root(const YAML::Node& root, const std::string& source) {
  RunConfig config;
  ConfigSection top(root, source);
  SectionReader reader{top};
  sections(reader, config);
  top.finish();
  return config;
}

}  // namespace

namespace {
constexpr NamedChoices<DistBackend, 4> kDistBackends{{{{DistBackend::kAuto, "auto"},
                                                       {DistBackend::kMpi, "mpi"},
                                                       {DistBackend::kMpiStaged, "mpi-staged"},
                                                       {DistBackend::kNccl, "nccl"}}}};
}  // namespace

DistBackend parse_dist_backend(const std::string& name) {
  return kDistBackends.parse(name, "backend");
}

const char* dist_backend_name(DistBackend backend) {
  return kDistBackends.name(backend);
}

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
  require(update_batches >= 0, "train.update_batches", "must be >= 0 (0: accumulation x ranks)");
  require(max_minutes >= 0, "train.max_minutes", "must be >= 0 (0: no time budget)");
  require(lr_factor > 0, "train.lr_factor", "must be positive");
  require(warmup_steps >= 1, "train.warmup_steps", "must be positive");
  require(cooldown >= 0 && cooldown <= 1, "train.cooldown",
          "must be in [0, 1] (the fraction of the run that ends the rate linearly at 0; 0: none)");
  require(adam_beta1 >= 0 && adam_beta1 < 1 && adam_beta2 >= 0 && adam_beta2 < 1,
          "train.adam_beta1", "betas must be in [0, 1)");
  require(adam_eps > 0, "train.adam_eps", "must be positive");
  require(label_smoothing >= 0 && label_smoothing < 1, "train.label_smoothing",
          "must be in [0, 1)");
  require(clip_norm >= 0, "train.clip_norm", "must be >= 0");
  require(max_skipped_updates >= 1, "train.max_skipped_updates", "must be >= 1");
  require(valid_bleu_every >= 0 && valid_bleu_beam >= 1 && valid_bleu_sentences >= 0,
          "train.valid_bleu_every",
          "valid_bleu_every, valid_bleu_sentences >= 0, valid_bleu_beam >= 1");
  require(validate_every >= 0 && early_stopping >= 0 && log_every >= 1, "train.validate_every",
          "validate_every and early_stopping must be >= 0, log_every >= 1");
  require(threads >= 0, "train.threads", "must be >= 0");
}

void CheckpointConfig::validate() const {
  require(every_steps >= 0 && every_minutes >= 0, "checkpoint.every_steps", "must be >= 0");
  require(keep_last >= 1, "checkpoint.keep_last", "must keep at least one checkpoint");
}

void DecodeConfig::validate() const {
  require(average_last >= 1, "decode.average_last", "must average at least one checkpoint");
  require(beam >= 1, "decode.beam", "must be at least 1");
  require(alpha >= 0, "decode.alpha", "must be >= 0");
}

void DistConfig::validate() const {
  require(bucket_mb > 0, "dist.bucket_mb", "must be positive");
  require(hang_timeout_s > 0 && root_work_timeout_s >= hang_timeout_s, "dist.hang_timeout_s",
          "must be positive and at most dist.root_work_timeout_s");
}

void RunConfig::validate() const {
  model.validate();
  data.validate();
  train.validate();
  checkpoint.validate();
  decode.validate();
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
  write_section(out, m);
  return out.c_str();
}

std::string to_yaml(const RunConfig& c) {
  YAML::Emitter out;
  RunConfig copy = c;  // the field lists take mutable references
  SectionWriter writer{out};
  out << YAML::BeginMap;
  sections(writer, copy);
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace nmt
