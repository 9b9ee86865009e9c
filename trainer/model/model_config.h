#pragma once
// The Transformer's hyper-parameters (paper section 3 and Table 3). Defaults are the base model.

#include <cstdint>
#include <string>

namespace nmt::model {

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
  std::string positions = "sinusoidal";  // "sinusoidal" (the paper) or "learned" (Table 3 row E)
  std::int64_t max_positions = 1024;     // longest sequence; size of the learned table
  std::string norm = "post";             // "post": LayerNorm(x + Dropout(Sublayer(x))) (the paper),
                                         // "pre": x + Dropout(Sublayer(LayerNorm(x))) + final norms
  std::string embedding_sharing = "all";  // "all": source and target embeddings and pre-softmax
                                          // projection share one matrix (joint vocabulary);
                                          // "decoder": target embedding + projection only; "none"
  double layer_norm_eps = 1e-5;

  // Throws std::invalid_argument naming the field.
  void validate() const;
  // Parameters of the model this config builds, from the closed formula (README, PAPER.md).
  std::int64_t expected_parameter_count() const;
};

}  // namespace nmt::model
