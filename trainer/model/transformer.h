#pragma once
// The Transformer (paper section 3, Figure 1): embeddings and positions, the encoder and decoder
// stacks, and the pre-softmax projection; plus incremental decoding with a key/value cache.
//
// Registered names (checkpoint keys): "embedding" (embedding_sharing "all": source and target
// embeddings and the projection), or "src_embedding" and "tgt_embedding" ("decoder": the target
// one is also the projection), plus "output_projection" ("none"); "encoder_positions",
// "decoder_positions"; "encoder" and "decoder", each with "layers.<i>" and, pre-norm only, "norm".

#include <torch/nn/module.h>
#include "trainer/model/dropout.h"

#include <cstdint>

#include "trainer/config/model_config.h"
#include "trainer/model/decoder.h"
#include "trainer/model/embedding.h"
#include "trainer/model/encoder.h"
#include "trainer/model/linear.h"
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
  // The pre-softmax projection's weight [vocab_size, d_model] (the target embedding's when
  // shared): logits(hidden) = hidden · weightᵀ. Not on a quantized model.
  const torch::Tensor& output_weight() const;

  // Incremental decoding: a cache holding the encoder output's cross-attention keys/values.
  // memory [sources, src_len, d_model], src [sources, src_len]; each source decoded by
  // rows_per_source target rows (beam search: its beams), which share its keys/values.
  DecoderCache start_decoding(const torch::Tensor& memory, const torch::Tensor& src,
                              std::int64_t rows_per_source = 1);
  // Feeds last_tokens [batch] int64 at position cache.length() (BOS first) and returns the
  // logits for the next position [batch, vocab_size]; the same as forward's at that position.
  torch::Tensor decode_step(const torch::Tensor& last_tokens, DecoderCache& cache);

  // Cross-attention of the last decoder layer, averaged over heads, for alignment heatmaps:
  // src [batch, src_len], tgt_in [batch, tgt_len] -> [batch, tgt_len, src_len]
  torch::Tensor cross_attention_weights(const torch::Tensor& src, const torch::Tensor& tgt_in);

  const ModelConfig& config() const { return config_; }
  // Elements of the distinct parameters (a shared matrix counts once).
  std::int64_t parameter_count() const;

  // For decoding on a CPU: every linear map (attention, feed-forward, the output projection)
  // and the embeddings switch to int8 weights with per-row scales, activations quantized per
  // call; their fp32 weights are released. Inference only and one way: the model can no longer
  // be trained, saved or moved off the CPU. Does nothing when already quantized.
  void quantize_int8();
  bool quantized() const;
  // For fp32 decoding on a CPU: every linear map and the output projection multiply by weights
  // kept in the BLAS's packed layout (runtime::PackedWeight), so no product re-packs its weight;
  // the linear maps' fp32 weights are released (the embedding keeps its own for the lookup).
  // Inference only and one way, as quantize_int8. Returns whether the weights were packed: false
  // where this process's BLAS has no packed products, or on a quantized model.
  bool pack_fp32();
  // Bytes of the model's weights as held now: its distinct parameters, plus the int8 or packed
  // weights that no parameter holds (by their layout: Int8Matrix::bytes, PackedWeight::bytes).
  // Buffers (the sinusoidal position table) are not counted.
  std::int64_t weight_bytes() const;

 private:
  // tokens [batch, len] at positions start.. -> Dropout(embedding * sqrt(d_model) + PE)
  torch::Tensor embed(const torch::Tensor& tokens, ScaledEmbedding& table,
                      PositionalEncoding& positions, std::int64_t start);

  ModelConfig config_;
  ScaledEmbedding src_embedding_{nullptr}, tgt_embedding_{nullptr};  // one module under "all"
  Linear output_projection_{nullptr};                                // "none" only
  PositionalEncoding encoder_positions_{nullptr}, decoder_positions_{nullptr};
  Dropout dropout_{nullptr};
  Encoder encoder_{nullptr};
  Decoder decoder_{nullptr};
};
TORCH_MODULE(Transformer);

}  // namespace nmt::model
