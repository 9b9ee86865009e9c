#pragma once
// The Transformer (paper section 3, Figure 1): embeddings and positions, the encoder and decoder
// stacks, and the pre-softmax projection; plus incremental decoding with a key/value cache.
//
// Registered names (checkpoint keys): "embedding" (embedding_sharing "all": source and target
// embeddings and the projection), or "src_embedding" and "tgt_embedding" ("decoder": the target
// one is also the projection), plus "output_projection" ("none"); "encoder_positions",
// "decoder_positions"; "encoder" and "decoder", each with "layers.<i>" and, pre-norm only, "norm".

#include <torch/nn/module.h>
#include <torch/nn/modules/linear.h>
#include "trainer/model/dropout.h"

#include <cstdint>

#include "trainer/config/model_config.h"
#include "trainer/model/decoder.h"
#include "trainer/model/embedding.h"
#include "trainer/model/encoder.h"
#include "trainer/model/positional_encoding.h"

namespace nmt::model {

// tokens [batch, len] int64 -> [batch, len] bool, true at nmt::preprocess::kPadId
torch::Tensor padding_mask(const torch::Tensor& tokens);

class TransformerImpl : public torch::nn::Module {
 public:
  // Validates the config (std::invalid_argument) and creates and initializes every parameter.
  explicit TransformerImpl(const ModelConfig& config);

  // src [batch, src_len] int64 -> memory [batch, src_len, d_model]
  torch::Tensor encode(const torch::Tensor& src);
  // tgt_in [batch, tgt_len] int64 (BOS first), memory from encode(src), src for its padding
  // -> hidden [batch, tgt_len, d_model]
  torch::Tensor decode(const torch::Tensor& tgt_in, const torch::Tensor& memory,
                       const torch::Tensor& src);
  // hidden [..., d_model] -> logits [..., vocab_size] (the pre-softmax projection, no bias)
  torch::Tensor logits(const torch::Tensor& hidden);
  // src [batch, src_len], tgt_in [batch, tgt_len] -> logits [batch, tgt_len, vocab_size]
  torch::Tensor forward(const torch::Tensor& src, const torch::Tensor& tgt_in);

  // Incremental decoding: a cache holding the encoder output's cross-attention keys/values.
  DecoderCache start_decoding(const torch::Tensor& memory, const torch::Tensor& src);
  // Feeds last_tokens [batch] int64 at position cache.length() (BOS first) and returns the
  // logits for the next position [batch, vocab_size]; the same as forward's at that position.
  torch::Tensor decode_step(const torch::Tensor& last_tokens, DecoderCache& cache);

  // Cross-attention of the last decoder layer, averaged over heads, for alignment heatmaps:
  // src [batch, src_len], tgt_in [batch, tgt_len] -> [batch, tgt_len, src_len]
  torch::Tensor cross_attention_weights(const torch::Tensor& src, const torch::Tensor& tgt_in);

  const ModelConfig& config() const { return config_; }
  // Elements of the distinct parameters (a shared matrix counts once).
  std::int64_t parameter_count() const;

 private:
  // tokens [batch, len] at positions start.. -> Dropout(embedding * sqrt(d_model) + PE)
  torch::Tensor embed(const torch::Tensor& tokens, ScaledEmbedding& table,
                      PositionalEncoding& positions, std::int64_t start);

  ModelConfig config_;
  ScaledEmbedding src_embedding_{nullptr}, tgt_embedding_{nullptr};  // one module under "all"
  torch::nn::Linear output_projection_{nullptr};                     // "none" only
  PositionalEncoding encoder_positions_{nullptr}, decoder_positions_{nullptr};
  Dropout dropout_{nullptr};
  Encoder encoder_{nullptr};
  Decoder decoder_{nullptr};
};
TORCH_MODULE(Transformer);

}  // namespace nmt::model
