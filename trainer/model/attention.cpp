// Scaled dot-product and multi-head attention (paper section 3.2.1 and 3.2.2).
// Deviation: blocked scores are set to a large finite negative number rather than -inf, and blocked
// weights are zeroed after the softmax, so rows with no visible key give zeros (not NaN) forward
// and backward. For every other row the result equals the -inf formulation exactly.

#include "trainer/model/attention.h"

#include <ATen/ops/cat.h>
#include <ATen/ops/ones.h>
#include <torch/nn/init.h>

#include <cmath>

namespace nmt::model {
namespace {

// exp(score - row max) underflows to exactly 0 for this score in the score's own dtype.
double blocked_score(at::ScalarType type) {
  return type == at::kHalf ? -65504.0 : -1e30;
}

}  // namespace

torch::Tensor AttentionMask::blocked(std::int64_t query_len, std::int64_t key_len,
                                     const torch::Device& device) const {
  torch::Tensor result;
  if (key_padding.defined()) {
    TORCH_CHECK(key_padding.dim() == 2 && key_padding.size(1) == key_len &&
                    key_padding.scalar_type() == at::kBool,
                "key_padding must be a bool [batch, ", key_len, "] tensor, got ",
                key_padding.sizes(), " ", key_padding.scalar_type());
    result = key_padding.view({key_padding.size(0), 1, 1, key_len});  // [batch, 1, 1, key_len]
  }
  if (causal) {
    TORCH_CHECK(query_len <= key_len, "causal attention needs query_len <= key_len, got ",
                query_len, " > ", key_len);
    // Query i sits at key position key_len - query_len + i; every later key is the future.
    const auto future = at::ones({query_len, key_len}, at::TensorOptions(at::kBool).device(device))
                            .triu(key_len - query_len + 1);  // [query_len, key_len]
    result = result.defined() ? result.logical_or(future) : future;
  }
  return result;
}

void KeyValue::append(const KeyValue& step) {
  if (empty()) {
    *this = step;
    return;
  }
  keys = at::cat({keys, step.keys}, 2);        // [batch, heads, len + step_len, d_k]
  values = at::cat({values, step.values}, 2);  // [batch, heads, len + step_len, d_v]
}

void KeyValue::reorder(const torch::Tensor& indices) {
  if (empty()) return;
  const auto rows = indices.to(keys.device());
  keys = keys.index_select(0, rows);
  values = values.index_select(0, rows);
}

torch::Tensor attention_weights(const torch::Tensor& query, const torch::Tensor& keys,
                                const torch::Tensor& blocked) {
  const double scale = 1.0 / std::sqrt(static_cast<double>(query.size(-1)));
  auto scores = query.matmul(keys.transpose(-2, -1)) * scale;  // [batch, heads, q_len, k_len]
  if (!blocked.defined()) return scores.softmax(-1);
  scores = scores.masked_fill(blocked, blocked_score(scores.scalar_type()));
  return scores.softmax(-1).masked_fill(blocked, 0.0);
}

MultiHeadAttentionImpl::MultiHeadAttentionImpl(std::int64_t d_model, std::int64_t heads,
                                               std::int64_t d_k, std::int64_t d_v, double dropout)
    : heads_(heads), d_k_(d_k), d_v_(d_v) {
  w_q_ = register_module("w_q", torch::nn::Linear(d_model, heads * d_k));
  w_k_ = register_module("w_k", torch::nn::Linear(d_model, heads * d_k));
  w_v_ = register_module("w_v", torch::nn::Linear(d_model, heads * d_v));
  w_o_ = register_module("w_o", torch::nn::Linear(heads * d_v, d_model));
  dropout_ = register_module("dropout", Dropout(dropout));
  // Glorot/Xavier uniform weights, zero biases (LibTorch's default is Kaiming uniform).
  for (auto* linear : {&w_q_, &w_k_, &w_v_, &w_o_}) {
    torch::nn::init::xavier_uniform_((*linear)->weight);
    torch::nn::init::zeros_((*linear)->bias);
  }
}

torch::Tensor MultiHeadAttentionImpl::split_heads(const torch::Tensor& x,
                                                  std::int64_t width) const {
  return x.reshape({x.size(0), x.size(1), heads_, width}).transpose(1, 2);
}

KeyValue MultiHeadAttentionImpl::project(const torch::Tensor& source) {
  TORCH_CHECK(source.dim() == 3, "attention source must be [batch, len, d_model], got ",
              source.sizes());
  return {split_heads(w_k_(source), d_k_),   // [batch, heads, src_len, d_k]
          split_heads(w_v_(source), d_v_)};  // [batch, heads, src_len, d_v]
}

torch::Tensor MultiHeadAttentionImpl::attend(const torch::Tensor& query, const KeyValue& source,
                                             const AttentionMask& mask) {
  TORCH_CHECK(query.dim() == 3, "attention query must be [batch, len, d_model], got ",
              query.sizes());
  TORCH_CHECK(!source.empty() && source.keys.size(0) == query.size(0),
              "attention source batch does not match the query batch ", query.size(0));
  const auto q = split_heads(w_q_(query), d_k_);  // [batch, heads, q_len, d_k]
  const auto blocked = mask.blocked(q.size(2), source.keys.size(2), query.device());
  const auto weights = dropout_(attention_weights(q, source.keys, blocked));  // [b, h, q, src]
  if (keep_weights_) last_weights_ = weights.detach();
  const auto context = weights.matmul(source.values);  // [batch, heads, q_len, d_v]
  // [batch, q_len, heads * d_v] -> [batch, q_len, d_model]
  return w_o_(context.transpose(1, 2).reshape({query.size(0), query.size(1), heads_ * d_v_}));
}

torch::Tensor MultiHeadAttentionImpl::forward(const torch::Tensor& query,
                                              const torch::Tensor& source,
                                              const AttentionMask& mask) {
  return attend(query, project(source), mask);
}

}  // namespace nmt::model
