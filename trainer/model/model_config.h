#pragma once
// The Transformer's hyper-parameters (paper section 3 and Table 3). Defaults are the base model.

#include <cstdint>
#include <string>

namespace nmt::model {

// Variants of Table 3, parsed once (model_config.cpp); errors list the choices.
enum class Positions { kSinusoidal, kLearned };  // row E: learned positional embeddings
enum class NormPlacement { kPost, kPre };        // post: the paper; pre: final norms added
enum class EmbeddingSharing { kAll, kDecoder, kNone };

Positions parse_positions(const std::string& name);
NormPlacement parse_norm(const std::string& name);
EmbeddingSharing parse_embedding_sharing(const std::string& name);
const char* enum_name(Positions value);
const char* enum_name(NormPlacement value);
const char* enum_name(EmbeddingSharing value);

struct ModelConfig {
  std::int64_t vocab_size = 37000;  // joint vocabulary; nmt-train sets it from the shards' model
  std::int64_t layers = 6;          // N: encoder layers, and as many decoder layers
  std::int64_t d_model = 512;
  std::int64_t d_ff = 2048;        // inner width of the position-wise feed-forward network
  std::int64_t heads = 8;          // h
  std::int64_t d_k = 64;           // per-head query/key width; Table 3 rows A and B vary it
  std::int64_t d_v = 64;           // per-head value width
  double dropout = 0.1;            // P_drop: sub-layer outputs and embedding + position sums
  double attention_dropout = 0.0;  // on attention weights (not in the paper; an option)
  double ffn_dropout = 0.0;        // after the ReLU inside the FFN (not in the paper; an option)
  Positions positions = Positions::kSinusoidal;  // sinusoidal (the paper) or learned (row E)
  std::int64_t max_positions = 1024;             // longest sequence; size of the learned table
  // post: LayerNorm(x + Dropout(Sublayer(x))) (the paper); pre: x + Dropout(Sublayer(LayerNorm(x)))
  // with a final norm after each stack
  NormPlacement norm = NormPlacement::kPost;
  // all: source and target embeddings and the pre-softmax projection share one matrix (joint
  // vocabulary); decoder: the target embedding and the projection only; none
  EmbeddingSharing embedding_sharing = EmbeddingSharing::kAll;
  double layer_norm_eps = 1e-5;

  // Throws std::invalid_argument naming the field.
  void validate() const;
  // Parameters of the model this config builds, from the closed formula (README, PAPER.md).
  std::int64_t expected_parameter_count() const;
};

}  // namespace nmt::model
