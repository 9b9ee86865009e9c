// A checkpoint as a CTranslate2 model directory (the mapping: ctranslate2_export.h).

#include "trainer/export/ctranslate2_export.h"

#include <ATen/ops/cat.h>
#include <ATen/ops/equal.h>
#include <fmt/format.h>
#include <torch/utils.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <vector>

#include <sys/stat.h>

#include "common/atomic_file.h"
#include "preprocess/shard_format.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/checkpoint_model.h"
#include "trainer/checkpoint/checkpoint_vocabulary.h"

namespace nmt::exporting {
namespace {

namespace fs = std::filesystem;
using model::EmbeddingSharing;
using model::NormPlacement;

// The model's tensors by state-dict name ("encoder.layers.0.self_attn.w_q.weight").
class NamedTensors {
 public:
  NamedTensors(model::TransformerImpl& model, std::string source) : source_(std::move(source)) {
    for (const auto& p : model.named_parameters()) tensors_.emplace(p.key(), p.value());
    for (const auto& b : model.named_buffers()) tensors_.emplace(b.key(), b.value());
  }
  at::Tensor operator()(const std::string& name) const {
    const auto it = tensors_.find(name);
    if (it == tensors_.end())
      throw std::invalid_argument(fmt::format("{}: the model has no tensor {}", source_, name));
    return it->second.detach().to(at::kCPU, at::kFloat);
  }

 private:
  std::string source_;
  std::map<std::string, at::Tensor> tensors_;
};

struct Scope {
  Ct2ModelFile& file;
  const NamedTensors& tensors;

  void linear(const std::string& to, const std::vector<std::string>& from) const {
    std::vector<at::Tensor> weights, biases;
    for (const auto& f : from) {
      weights.push_back(tensors(f + ".weight"));
      biases.push_back(tensors(f + ".bias"));
    }
    file.add_tensor(to + "/weight", at::cat(weights, 0));  // [out, in]: fused outputs stacked
    file.add_tensor(to + "/bias", at::cat(biases, 0));
  }
  void layer_norm(const std::string& to, const std::string& from) const {
    file.add_tensor(to + "/gamma", tensors(from + ".weight"));
    file.add_tensor(to + "/beta", tensors(from + ".bias"));
  }
};

// One attention block: self-attention fuses q, k, v; cross-attention keeps q apart, fuses k, v.
void add_attention(const Scope& s, const model::ModelConfig& config, const std::string& to,
                   const std::string& from, const std::string& norm, bool self) {
  if (self) {
    s.linear(to + "/linear_0", {from + ".w_q", from + ".w_k", from + ".w_v"});
    s.linear(to + "/linear_1", {from + ".w_o"});
  } else {
    s.linear(to + "/linear_0", {from + ".w_q"});
    s.linear(to + "/linear_1", {from + ".w_k", from + ".w_v"});
    s.linear(to + "/linear_2", {from + ".w_o"});
  }
  s.layer_norm(to + "/layer_norm", norm);
  // Without it CTranslate2 takes d_model / heads as the head width.
  if (config.heads * config.d_k != config.d_model)
    s.file.add_int32(to + "/head_dim", static_cast<std::int32_t>(config.d_k));
}

void add_ffn(const Scope& s, const std::string& to, const std::string& from,
             const std::string& norm) {
  s.linear(to + "/linear_0", {from + ".linear1"});
  s.linear(to + "/linear_1", {from + ".linear2"});
  s.layer_norm(to + "/layer_norm", norm);
}

// The flags and sizes both stacks carry, as the Python converters write them.
void add_stack_attributes(Ct2ModelFile& file, const std::string& stack,
                          const model::ModelConfig& config) {
  file.add_int16(stack + "/num_heads", static_cast<std::int16_t>(config.heads));
  file.add_int8(stack + "/pre_norm", config.norm == NormPlacement::kPre ? 1 : 0);
  file.add_int8(stack + "/activation", 0);        // ReLU
  file.add_int8(stack + "/scale_embeddings", 1);  // sqrt(d_model)
}

void add_encoder(const Scope& s, const model::ModelConfig& config, const std::string& embedding) {
  auto& file = s.file;
  add_stack_attributes(file, "encoder", config);
  file.add_int8("encoder/embeddings_merge", 0);
  file.add_int8("encoder/multi_query_attention", 0);
  file.add_tensor("encoder/embeddings_0/weight", s.tensors(embedding));
  for (std::int64_t i = 0; i < config.layers; ++i) {
    const auto to = fmt::format("encoder/layer_{}", i);
    const auto from = fmt::format("encoder.layers.{}", i);
    add_attention(s, config, to + "/self_attention", from + ".self_attn", from + ".norm1", true);
    add_ffn(s, to + "/ffn", from + ".ffn", from + ".norm2");
  }
  if (config.norm == NormPlacement::kPre) s.layer_norm("encoder/layer_norm", "encoder.norm");
}

void add_decoder(const Scope& s, const model::ModelConfig& config, const std::string& embedding) {
  auto& file = s.file;
  add_stack_attributes(file, "decoder", config);
  file.add_int16("decoder/alignment_layer", -1);
  file.add_int16("decoder/alignment_heads", 1);
  file.add_int8("decoder/alibi", 0);
  file.add_int8("decoder/alibi_use_positive_positions", 0);
  file.add_int8("decoder/scale_alibi", 0);
  file.add_int8("decoder/start_from_zero_embedding", 0);
  file.add_tensor("decoder/embeddings/weight", s.tensors(embedding));
  for (std::int64_t i = 0; i < config.layers; ++i) {
    const auto to = fmt::format("decoder/layer_{}", i);
    const auto from = fmt::format("decoder.layers.{}", i);
    add_attention(s, config, to + "/self_attention", from + ".self_attn", from + ".norm1", true);
    add_attention(s, config, to + "/attention", from + ".cross_attn", from + ".norm2", false);
    add_ffn(s, to + "/ffn", from + ".ffn", from + ".norm3");
  }
  if (config.norm == NormPlacement::kPre) s.layer_norm("decoder/layer_norm", "decoder.norm");
}

// Renames `from` onto `to`, naming both on failure.
void rename_path(const fs::path& from, const fs::path& to) {
  std::error_code error;
  fs::rename(from, to, error);
  if (error)
    throw std::runtime_error(
        fmt::format("cannot rename {} to {}: {}", from.string(), to.string(), error.message()));
}

// A new empty directory `base` + ".<tag>-XXXXXX" beside `base`.
fs::path make_sibling_dir(const fs::path& base, const char* tag) {
  std::string pattern = fmt::format("{}.{}-XXXXXX", base.string(), tag);
  if (::mkdtemp(pattern.data()) == nullptr)
    throw std::runtime_error(fmt::format("cannot create a directory beside {}: {}", base.string(),
                                         std::strerror(errno)));
  // mkdtemp makes it private (0700); the output directory gets the usual mode.
  const auto mask = ::umask(0);
  ::umask(mask);
  fs::permissions(pattern, static_cast<fs::perms>(0777 & ~mask));
  return pattern;
}

// The pieces in id order, refused when two are equal (CTranslate2 maps tokens to ids by text).
nlohmann::json vocabulary_json(const preprocess::Vocabulary& vocab) {
  auto pieces = nlohmann::json::array();
  std::set<std::string> seen;
  for (int id = 0; id < vocab.size(); ++id) {
    auto piece = vocab.piece(id);
    if (!seen.insert(piece).second)
      throw std::invalid_argument(
          fmt::format("vocabulary piece {} (id {}) occurs twice; CTranslate2 needs distinct pieces",
                      piece, id));
    pieces.push_back(std::move(piece));
  }
  return pieces;
}

}  // namespace

void check_ctranslate2_exportable(const model::ModelConfig& config, const std::string& source) {
  if (config.d_k != config.d_v)
    throw std::invalid_argument(fmt::format(
        "{}: model.d_k = {} and model.d_v = {} differ; CTranslate2's attention has one head width "
        "for keys and values, so this model cannot be exported",
        source, config.d_k, config.d_v));
}

Ct2ModelFile ctranslate2_variables(model::TransformerImpl& model, const std::string& source) {
  const auto& config = model.config();
  check_ctranslate2_exportable(config, source);
  Ct2ModelFile file;
  const NamedTensors tensors(model, source);
  const Scope s{file, tensors};
  const bool all = config.embedding_sharing == EmbeddingSharing::kAll;
  const std::string target_embedding = all ? "embedding.weight" : "tgt_embedding.weight";
  add_encoder(s, config, all ? "embedding.weight" : "src_embedding.weight");
  add_decoder(s, config, target_embedding);
  // Positions: one table when encoder and decoder have equal ones (sinusoidal).
  const auto encoder_positions = tensors("encoder_positions.weight");
  const auto decoder_positions = tensors("decoder_positions.weight");
  file.add_tensor("decoder/position_encodings/encodings", decoder_positions);
  if (at::equal(encoder_positions, decoder_positions))
    file.add_alias("encoder/position_encodings/encodings", "decoder/position_encodings/encodings");
  else
    file.add_tensor("encoder/position_encodings/encodings", encoder_positions);
  if (config.embedding_sharing == EmbeddingSharing::kNone)
    file.add_tensor("decoder/projection/weight", tensors("output_projection.weight"));
  else
    file.add_alias("decoder/projection/weight", "decoder/embeddings/weight");
  return file;
}

std::string ctranslate2_config_json(const model::ModelConfig& config,
                                    const preprocess::Vocabulary& vocab) {
  const nlohmann::json json = {
      {"add_source_bos", false},
      {"add_source_eos", true},  // nmt-translate feeds source + EOS
      {"bos_token", vocab.piece(preprocess::kBosId)},
      {"decoder_start_token", vocab.piece(preprocess::kBosId)},
      {"eos_token", vocab.piece(preprocess::kEosId)},
      {"unk_token", vocab.piece(preprocess::kUnkId)},
      {"layer_norm_epsilon", config.layer_norm_eps},
      {"multi_query_attention", false},
  };
  return json.dump(2) + "\n";
}

Ct2ExportSummary export_ctranslate2(const std::string& checkpoint, const std::string& out_dir,
                                    const Ct2ExportOptions& options) {
  auto out = fs::path(out_dir).lexically_normal();
  if (!out.has_filename()) out = out.parent_path();  // "dir/"
  if (out.empty()) throw std::invalid_argument("the output directory is empty");
  if (fs::exists(out)) {
    if (!fs::is_directory(out))
      throw std::invalid_argument(fmt::format("{} exists and is not a directory", out.string()));
    if (!fs::is_empty(out) && !options.force)
      throw std::invalid_argument(
          fmt::format("{} exists and is not empty: pass --force to replace it", out.string()));
  }
  auto [config, state, model] = checkpoint::load_for_inference(checkpoint);
  check_ctranslate2_exportable(config.model, checkpoint);
  torch::NoGradGuard no_grad;
  const auto vocab =
      checkpoint::checkpoint_vocabulary(checkpoint, state, config, {options.spm_model, {}});
  const auto variables = ctranslate2_variables(*model, checkpoint);
  const auto pieces = vocabulary_json(vocab).dump(1) + "\n";

  if (!out.parent_path().empty()) fs::create_directories(out.parent_path());
  const auto staging = make_sibling_dir(out, "tmp");
  Ct2ExportSummary summary;
  try {
    variables.write((staging / "model.bin").string(), kCt2SpecName, kCt2SpecRevision);
    write_file_atomically((staging / "config.json").string(),
                          ctranslate2_config_json(config.model, vocab));
    write_file_atomically((staging / "shared_vocabulary.json").string(), pieces);
    write_file_atomically((staging / preprocess::kVocabularyFile).string(), vocab.serialized());
    fsync_path(staging.string());
    summary.variables = variables.size();
    summary.model_bytes = fs::file_size(staging / "model.bin");
    if (fs::exists(out)) {
      // rename() replaces an empty directory only: move the old one aside first.
      const auto old = make_sibling_dir(out, "old");
      rename_path(out, old);
      rename_path(staging, out);
      fs::remove_all(old);
    } else {
      rename_path(staging, out);
    }
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(staging, ignored);
    throw;
  }
  fsync_path(out.has_parent_path() ? out.parent_path().string() : std::string("."));
  return summary;
}

}  // namespace nmt::exporting
