#pragma once
// The residual connection and layer normalization around every sub-layer (paper section 3.1):
// post-norm LayerNorm(x + Dropout(Sublayer(x))) as in the paper, or the pre-norm variant
// x + Dropout(Sublayer(LayerNorm(x))) (ModelConfig::norm), whose stacks end in a final LayerNorm.

#include <torch/nn/modules/normalization.h>
#include "trainer/model/dropout.h"

#include "trainer/config/model_config.h"

namespace nmt::model {

inline NormPlacement norm_placement(const ModelConfig& config) {
  return config.norm;
}

inline torch::nn::LayerNorm make_layer_norm(const ModelConfig& config) {
  return torch::nn::LayerNorm(
      torch::nn::LayerNormOptions({config.d_model}).eps(config.layer_norm_eps));
}

// x [batch, len, d_model] -> [batch, len, d_model]; `sublayer` maps [batch, len, d_model] to
// the same shape.
template <typename Sublayer>
torch::Tensor residual(const torch::Tensor& x, torch::nn::LayerNorm& norm, Dropout& dropout,
                       NormPlacement placement, Sublayer&& sublayer) {
  if (placement == NormPlacement::kPre) return x + dropout(sublayer(norm(x)));
  return norm(x + dropout(sublayer(x)));
}

}  // namespace nmt::model
