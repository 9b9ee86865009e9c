#pragma once
// The encoder stack (paper section 3.1): N identical layers of multi-head self-attention followed
// by the position-wise feed-forward network, each wrapped in a residual connection and LayerNorm.

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/normalization.h>
#include "trainer/model/dropout.h"

#include "trainer/config/model_config.h"
#include "trainer/model/attention.h"
#include "trainer/model/feed_forward.h"
#include "trainer/model/sublayer.h"

namespace nmt::model {

class EncoderLayerImpl : public torch::nn::Module {
 public:
  explicit EncoderLayerImpl(const ModelConfig& config);

  // x [batch, src_len, d_model] -> [batch, src_len, d_model]; mask: the source padding
  torch::Tensor forward(const torch::Tensor& x, const AttentionMask& mask);

 private:
  NormPlacement placement_;
  MultiHeadAttention self_attn_{nullptr};
  FeedForward ffn_{nullptr};
  torch::nn::LayerNorm norm1_{nullptr}, norm2_{nullptr};
  Dropout dropout_{nullptr};
};
TORCH_MODULE(EncoderLayer);

class EncoderImpl : public torch::nn::Module {
 public:
  explicit EncoderImpl(const ModelConfig& config);

  // x: embedded source [batch, src_len, d_model] -> memory [batch, src_len, d_model]
  torch::Tensor forward(const torch::Tensor& x, const AttentionMask& mask);

  bool has_final_norm() const { return !norm_.is_empty(); }

 private:
  torch::nn::ModuleList layers_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};  // pre-norm only
};
TORCH_MODULE(Encoder);

}  // namespace nmt::model
