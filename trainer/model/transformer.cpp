// The Transformer (paper section 3): embeddings (3.4) and positions (3.5) with dropout on their sum
// at the bottom of both stacks (5.4), encoder and decoder (3.1), the pre-softmax projection shared
// with the embeddings (3.4), and incremental decoding for inference.
//
// Initialization (the paper does not state one): Glorot/Xavier uniform weights and zero biases for
// every linear map of attention and feed-forward layers; N(0, d_model^-0.5) for token embeddings,
// a separate output projection and learned positions, so that embedding * sqrt(d_model) has unit
// variance; LayerNorm gain 1 and bias 0.

#include "trainer/model/transformer.h"

#include <ATen/ops/empty.h>
#include <torch/nn/init.h>

#include <cmath>
#include <unordered_set>

#include "preprocess/vocabulary.h"

namespace nmt::model {

torch::Tensor padding_mask(const torch::Tensor& tokens) {
  return tokens.eq(nmt::preprocess::kPadId);  // [batch, len] bool
}

TransformerImpl::TransformerImpl(const ModelConfig& config) : config_(config) {
  config_.validate();
  const auto vocab = config_.vocab_size, d_model = config_.d_model;
  if (config_.embedding_sharing == EmbeddingSharing::kAll) {
    src_embedding_ = register_module("embedding", ScaledEmbedding(vocab, d_model));
    tgt_embedding_ = src_embedding_;
  } else {
    src_embedding_ = register_module("src_embedding", ScaledEmbedding(vocab, d_model));
    tgt_embedding_ = register_module("tgt_embedding", ScaledEmbedding(vocab, d_model));
  }
  encoder_positions_ = register_module("encoder_positions", PositionalEncoding(config_));
  decoder_positions_ = register_module("decoder_positions", PositionalEncoding(config_));
  dropout_ = register_module("dropout", Dropout(config_.dropout));
  encoder_ = register_module("encoder", Encoder(config_));
  decoder_ = register_module("decoder", Decoder(config_));
  if (config_.embedding_sharing == EmbeddingSharing::kNone) {
    output_projection_ =
        register_module("output_projection", Linear(d_model, vocab, /*bias=*/false));
    torch::nn::init::normal_(output_projection_->weight, 0.0,
                             std::pow(static_cast<double>(d_model), -0.5));
  }
}

torch::Tensor TransformerImpl::embed(const torch::Tensor& tokens, ScaledEmbedding& table,
                                     PositionalEncoding& positions, std::int64_t start) {
  TORCH_CHECK(tokens.dim() == 2, "token ids must be [batch, len], got ", tokens.sizes());
  const auto pe = positions(start, tokens.size(1));  // [len, d_model]
  return dropout_(table(tokens) + pe);               // [batch, len, d_model]
}

torch::Tensor TransformerImpl::encode(const torch::Tensor& src) {
  const auto x = embed(src, src_embedding_, encoder_positions_, 0);  // [batch, src_len, d_model]
  return encoder_(x, AttentionMask{padding_mask(src), false});       // [batch, src_len, d_model]
}

torch::Tensor TransformerImpl::decode(const torch::Tensor& tgt_in, const torch::Tensor& memory,
                                      const torch::Tensor& src) {
  TORCH_CHECK(memory.dim() == 3 && src.dim() == 2 && memory.size(0) == src.size(0) &&
                  memory.size(1) == src.size(1) && tgt_in.size(0) == src.size(0),
              "decode: tgt_in ", tgt_in.sizes(), ", memory ", memory.sizes(), " and src ",
              src.sizes(), " disagree");
  const DecoderMasks masks{{padding_mask(tgt_in), true}, {padding_mask(src), false}};
  const auto y = embed(tgt_in, tgt_embedding_, decoder_positions_, 0);  // [batch, tgt_len, d_model]
  return decoder_(y, memory, masks);                                    // [batch, tgt_len, d_model]
}

torch::Tensor TransformerImpl::logits(const torch::Tensor& hidden) {
  if (!output_projection_.is_empty()) return output_projection_(hidden);  // [..., vocab_size]
  return tgt_embedding_->project(hidden);                                 // [..., vocab_size]
}

const torch::Tensor& TransformerImpl::output_weight() const {
  TORCH_CHECK(!quantized(), "a quantized model has no fp32 output projection");
  if (!output_projection_.is_empty()) return output_projection_->weight;  // [vocab, d_model]
  return tgt_embedding_->weight();                                        // [vocab, d_model]
}

torch::Tensor TransformerImpl::forward(const torch::Tensor& src, const torch::Tensor& tgt_in) {
  const auto memory = encode(src);             // [batch, src_len, d_model]
  return logits(decode(tgt_in, memory, src));  // [batch, tgt_len, vocab_size]
}

DecoderCache TransformerImpl::start_decoding(const torch::Tensor& memory, const torch::Tensor& src,
                                             std::int64_t rows_per_source) {
  return decoder_->start(memory, padding_mask(src), rows_per_source);
}

torch::Tensor TransformerImpl::decode_step(const torch::Tensor& last_tokens, DecoderCache& cache) {
  TORCH_CHECK(last_tokens.dim() == 1, "decode_step takes [batch] token ids, got ",
              last_tokens.sizes());
  // The embedded token at position cache.length(): [batch, 1, d_model]
  const auto y =
      embed(last_tokens.view({-1, 1}), tgt_embedding_, decoder_positions_, cache.length());
  const auto hidden = decoder_->step(y, padding_mask(last_tokens), cache);  // [batch, 1, d_model]
  return logits(hidden).squeeze(1);                                         // [batch, vocab_size]
}

void TransformerImpl::quantize_int8() {
  if (quantized()) return;
  // Under "all" the one embedding is also the projection; under "decoder" the target one is.
  src_embedding_->quantize_int8(config_.embedding_sharing == EmbeddingSharing::kAll);
  tgt_embedding_->quantize_int8(config_.embedding_sharing != EmbeddingSharing::kNone);
  for (const auto& module : modules()) {
    if (auto* linear = module->as<LinearImpl>()) linear->quantize_int8();
  }
}

bool TransformerImpl::pack_fp32() {
  if (quantized() || !runtime::PackedWeight::available()) return false;
  TORCH_CHECK(src_embedding_->weight().device().is_cpu() &&
                  src_embedding_->weight().scalar_type() == at::kFloat,
              "packed weights are for fp32 decoding on a CPU, got ",
              src_embedding_->weight().scalar_type(), " on ", src_embedding_->weight().device());
  if (config_.embedding_sharing != EmbeddingSharing::kNone) tgt_embedding_->pack_projection();
  for (const auto& module : modules()) {
    if (auto* linear = module->as<LinearImpl>()) linear->pack_fp32();
  }
  return true;
}

bool TransformerImpl::quantized() const {
  return src_embedding_->quantized();
}

std::int64_t TransformerImpl::weight_bytes() const {
  std::unordered_set<const void*> seen;
  std::int64_t bytes = 0;
  for (const auto& parameter : parameters()) {
    if (seen.insert(parameter.unsafeGetTensorImpl()).second) {
      bytes += static_cast<std::int64_t>(parameter.nbytes());
    }
  }
  for (const auto& module : modules()) {
    if (const auto* linear = module->as<LinearImpl>()) bytes += linear->extra_bytes();
    if (const auto* table = module->as<ScaledEmbeddingImpl>()) bytes += table->extra_bytes();
  }
  return bytes;
}

std::int64_t TransformerImpl::parameter_count() const {
  std::unordered_set<const void*> seen;
  std::int64_t count = 0;
  for (const auto& parameter : parameters()) {
    if (seen.insert(parameter.unsafeGetTensorImpl()).second) count += parameter.numel();
  }
  return count;
}

torch::Tensor TransformerImpl::cross_attention_weights(const torch::Tensor& src,
                                                       const torch::Tensor& tgt_in) {
  auto& probe = decoder_->layer(decoder_->num_layers() - 1).cross_attention();
  probe.keep_weights(true);
  forward(src, tgt_in);
  probe.keep_weights(false);
  return probe.last_weights().mean(1);  // [batch, tgt_len, src_len]
}

}  // namespace nmt::model
