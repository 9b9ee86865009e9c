// The encoder stack (paper section 3.1). Each layer: self-attention over the source (padding
// masked), then the feed-forward network; the final LayerNorm exists only for pre-norm stacks.

#include "trainer/model/encoder.h"

namespace nmt::model {

EncoderLayerImpl::EncoderLayerImpl(const ModelConfig& config) : placement_(norm_placement(config)) {
  self_attn_ =
      register_module("self_attn", MultiHeadAttention(config.d_model, config.heads, config.d_k,
                                                      config.d_v, config.attention_dropout));
  ffn_ = register_module("ffn", FeedForward(config.d_model, config.d_ff, config.ffn_dropout));
  norm1_ = register_module("norm1", make_layer_norm(config));
  norm2_ = register_module("norm2", make_layer_norm(config));
  dropout_ = register_module("dropout", Dropout(config.dropout));
}

torch::Tensor EncoderLayerImpl::forward(const torch::Tensor& x, const AttentionMask& mask) {
  auto h = residual(x, norm1_, dropout_, placement_,
                    [&](const torch::Tensor& y) { return self_attn_(y, y, mask); });
  return residual(h, norm2_, dropout_, placement_,
                  [&](const torch::Tensor& y) { return ffn_(y); });  // [batch, src_len, d_model]
}

EncoderImpl::EncoderImpl(const ModelConfig& config) {
  layers_ = register_module("layers", torch::nn::ModuleList());
  for (std::int64_t i = 0; i < config.layers; ++i) layers_->push_back(EncoderLayer(config));
  if (norm_placement(config) == NormPlacement::kPre) {
    norm_ = register_module("norm", make_layer_norm(config));
  }
}

torch::Tensor EncoderImpl::forward(const torch::Tensor& x, const AttentionMask& mask) {
  auto h = x;  // [batch, src_len, d_model]
  for (const auto& layer : *layers_) h = layer->as<EncoderLayerImpl>()->forward(h, mask);
  return has_final_norm() ? norm_(h) : h;
}

}  // namespace nmt::model
