// Embeddings and softmax (paper section 3.4). No padding_idx: padding positions are never
// attended to, so their embedding does not matter and needs no special case.

#include "trainer/model/embedding.h"

#include <ATen/ops/embedding.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/linear.h>
#include <torch/nn/init.h>
#include <torch/utils.h>

#include <cmath>

namespace nmt::model {

ScaledEmbeddingImpl::ScaledEmbeddingImpl(std::int64_t vocab_size, std::int64_t d_model)
    : scale_(std::sqrt(static_cast<double>(d_model))) {
  weight_ = register_parameter("weight", at::empty({vocab_size, d_model}));
  torch::nn::init::normal_(weight_, 0.0, 1.0 / scale_);
}

torch::Tensor ScaledEmbeddingImpl::forward(const torch::Tensor& tokens) {
  TORCH_CHECK(tokens.scalar_type() == at::kLong, "token ids must be int64, got ",
              tokens.scalar_type());
  if (!quantized()) return at::embedding(weight_, tokens) * scale_;         // [batch, len, d_model]
  const auto ids = tokens.reshape({-1}).to(int8_rows_.values.device());     // [n]
  const auto rows = int8_rows_.values.index_select(0, ids).to(at::kFloat);  // [n, d_model]
  const auto scales = int8_rows_.scales.index_select(0, ids).mul(scale_).unsqueeze(1);  // [n, 1]
  auto sizes = tokens.sizes().vec();
  sizes.push_back(rows.size(1));
  return rows.mul(scales).view(sizes);  // [batch, len, d_model]
}

torch::Tensor ScaledEmbeddingImpl::project(const torch::Tensor& hidden) {
  if (int8_projection_) return int8_projection_->linear(hidden);          // [..., vocab_size]
  if (packed_projection_) return packed_projection_->linear(hidden, {});  // [..., vocab_size]
  TORCH_CHECK(!quantized(), "this embedding was quantized without its projection");
  return at::linear(hidden, weight_);  // [..., vocab_size]
}

void ScaledEmbeddingImpl::quantize_int8(bool projection) {
  if (quantized()) return;
  TORCH_CHECK(weight_.device().is_cpu() && weight_.scalar_type() == at::kFloat,
              "int8 quantization needs fp32 weights on the CPU, got ", weight_.scalar_type(),
              " on ", weight_.device());
  int8_rows_ = quantize_rows(weight_);
  if (projection) int8_projection_.emplace(weight_, torch::Tensor());
  torch::NoGradGuard no_grad;
  weight_.set_();  // the registered tensor too: its fp32 storage is freed
}

void ScaledEmbeddingImpl::pack_projection() {
  if (quantized() || packed_projection_ || !runtime::PackedWeight::available()) return;
  packed_projection_.emplace(weight_);
}

std::int64_t ScaledEmbeddingImpl::extra_bytes() const {
  if (packed_projection_) return packed_projection_->bytes();
  if (!quantized()) return 0;
  return int8_rows_.values.nbytes() + int8_rows_.scales.nbytes() +
         (int8_projection_ ? int8_projection_->bytes() : 0);
}

}  // namespace nmt::model
