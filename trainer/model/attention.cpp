// Scaled dot-product and multi-head attention (paper section 3.2.1 and 3.2.2).
// Deviation: blocked scores are set to a large finite negative number rather than -inf, and blocked
// weights are zeroed after the softmax, so rows with no visible key give zeros (not NaN) forward
// and backward. For every other row the result equals the -inf formulation exactly.

#include "trainer/model/attention.h"

#include <ATen/ops/empty.h>
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
  if (causal && query_len > 1) {  // a single query sits at the last key: nothing is in its future
    TORCH_CHECK(query_len <= key_len, "causal attention needs query_len <= key_len, got ",
                query_len, " > ", key_len);
    // Query i sits at key position key_len - query_len + i; every later key is the future.
    const auto future = at::ones({query_len, key_len}, at::TensorOptions(at::kBool).device(device))
                            .triu(key_len - query_len + 1);  // [query_len, key_len]
    result = result.defined() ? result.logical_or(future) : future;
  }
  return result;
}

namespace {

// Positions the decoding cache's storage grows by: appends copy the prefix once per this many
// positions, and the storage holds at most this many positions more than it uses (memory: beam
// search reorders the whole storage at every step).
constexpr std::int64_t kGrowth = 8;

// `storage` [batch, heads, capacity, width] grown to hold at least `needed` positions, keeping
// its first `used`.
torch::Tensor reserve_positions(const torch::Tensor& storage, std::int64_t used,
                                std::int64_t needed) {
  if (storage.size(2) >= needed) return storage;
  const auto capacity = (needed + kGrowth - 1) / kGrowth * kGrowth;
  auto grown = at::empty({storage.size(0), storage.size(1), capacity, storage.size(3)},
                         storage.options());  // [batch, heads, capacity, width]
  if (used > 0) grown.narrow(2, 0, used).copy_(storage.narrow(2, 0, used));
  return grown;
}

}  // namespace

void KeyValue::append(const KeyValue& step) {
  const std::int64_t used = empty() ? 0 : keys.size(2);
  const std::int64_t added = step.keys.size(2);
  if (!key_storage_.defined()) {
    key_storage_ = step.keys.new_empty(
        {step.keys.size(0), step.keys.size(1), 0, step.keys.size(3)});  // [batch, heads, 0, d_k]
    value_storage_ = step.values.new_empty({step.values.size(0), step.values.size(1), 0,
                                            step.values.size(3)});  // [batch, heads, 0, d_v]
  }
  key_storage_ = reserve_positions(key_storage_, used, used + added);
  value_storage_ = reserve_positions(value_storage_, used, used + added);
  key_storage_.narrow(2, used, added).copy_(step.keys);
  value_storage_.narrow(2, used, added).copy_(step.values);
  keys = key_storage_.narrow(2, 0, used + added);      // [batch, heads, len + added, d_k]
  values = value_storage_.narrow(2, 0, used + added);  // [batch, heads, len + added, d_v]
}

void KeyValue::reorder(const torch::Tensor& indices) {
  if (empty()) return;
  const auto rows = indices.to(keys.device());
  if (!key_storage_.defined()) {  // projected once (cross-attention): no room to append
    keys = keys.index_select(0, rows);
    values = values.index_select(0, rows);
    return;
  }
  const auto used = keys.size(2);
  key_storage_ = key_storage_.index_select(0, rows);  // [new_batch, heads, capacity, d_k]
  value_storage_ = value_storage_.index_select(0, rows);
  keys = key_storage_.narrow(2, 0, used);
  values = value_storage_.narrow(2, 0, used);
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
  w_q_ = register_module("w_q", Linear(d_model, heads * d_k));
  w_k_ = register_module("w_k", Linear(d_model, heads * d_k));
  w_v_ = register_module("w_v", Linear(d_model, heads * d_v));
  w_o_ = register_module("w_o", Linear(heads * d_v, d_model));
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
  TORCH_CHECK(!source.empty(), "attention over an empty source");
  const auto batch = query.size(0), q_len = query.size(1), sources = source.keys.size(0);
  TORCH_CHECK(sources > 0 && batch % sources == 0, "attention source batch ", sources,
              " does not divide the query batch ", batch);
  const auto group = batch / sources;  // query rows per source row
  TORCH_CHECK(group == 1 || !mask.causal, "causal attention needs one query row per source row");
  auto q = split_heads(w_q_(query), d_k_);  // [batch, heads, q_len, d_k]
  if (group > 1) {
    // A source row's query rows side by side: [sources, heads, group * q_len, d_k]
    q = q.reshape({sources, group, heads_, q_len, d_k_})
            .transpose(1, 2)
            .reshape({sources, heads_, group * q_len, d_k_});
  }
  const auto blocked = mask.blocked(q.size(2), source.keys.size(2), query.device());
  const auto weights = dropout_(attention_weights(q, source.keys, blocked));  // [s, h, g*q, src]
  if (keep_weights_) {
    last_weights_ = weights.detach()
                        .reshape({sources, heads_, group, q_len, -1})
                        .transpose(1, 2)
                        .reshape({batch, heads_, q_len, -1});  // [batch, heads, q_len, src_len]
  }
  const auto context = weights.matmul(source.values);  // [sources, heads, group * q_len, d_v]
  // [sources, group * q_len, heads, d_v] -> [batch, q_len, heads * d_v] -> [batch, q_len, d_model]
  return w_o_(context.transpose(1, 2).reshape({batch, q_len, heads_ * d_v_}));
}

torch::Tensor MultiHeadAttentionImpl::forward(const torch::Tensor& query,
                                              const torch::Tensor& source,
                                              const AttentionMask& mask) {
  return attend(query, project(source), mask);
}

}  // namespace nmt::model
