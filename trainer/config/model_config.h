#pragma once
// The Transformer's hyper-parameters (paper section 3 and Table 3). Defaults are the base model.

#include <cstdint>
#include <string>

namespace nmt::model {

// Variants of Table 3, parsed once (model_config.cpp); errors list the choices.
enum class Positions { kSinusoidal, kLearned };
enum class NormPlacement { kPost, kPre };
enum class EmbeddingSharing { kAll, kDecoder, kNone };

Positions parse_positions(const std::string& name);
NormPlacement parse_norm(const std::string& name);
EmbeddingSharing parse_embedding_sharing(const std::string& name);
const char* enum_name(Positions value);
const char* enum_name(NormPlacement value);
const char* enum_name(EmbeddingSharing value);

// Each field's meaning and the paper's values: the field list in trainer/config/train_config.cpp
// (docs/config.md).
struct ModelConfig {
  std::int64_t vocab_size = 37000;
  std::int64_t layers = 6;
  std::int64_t d_model = 512;
  std::int64_t d_ff = 2048;
  std::int64_t heads = 8;
  std::int64_t d_k = 64;
  std::int64_t d_v = 64;
  double dropout = 0.1;
  double attention_dropout = 0.0;
  double ffn_dropout = 0.0;
  Positions positions = Positions::kSinusoidal;
  std::int64_t max_positions = 1024;
  NormPlacement norm = NormPlacement::kPost;
  EmbeddingSharing embedding_sharing = EmbeddingSharing::kAll;
  double layer_norm_eps = 1e-5;

  // Throws std::invalid_argument naming the field.
  void validate() const;
  // Parameters of the model this config builds, from the closed formula (README, PAPER.md).
  std::int64_t expected_parameter_count() const;
};

}  // namespace nmt::model
