#pragma once
// Scaled dot-product and multi-head attention (paper section 3.2.1 and 3.2.2).
// The per-head widths d_k and d_v are independent of d_model / h (Table 3 rows A and B vary them).

#include <torch/nn/module.h>
#include "trainer/model/dropout.h"
#include "trainer/model/linear.h"

#include <cstdint>
#include <utility>

namespace nmt::model {

// Which keys a query may not look at. Padding and causality are the only two reasons in the model.
struct AttentionMask {
  torch::Tensor key_padding;  // [batch, key_len] bool, true at padding; undefined: no padding
  bool causal = false;        // query i (aligned to the last keys) sees keys up to its own position

  // The blocked (query, key) pairs, broadcastable to [batch, heads, query_len, key_len];
  // undefined when nothing is blocked.
  torch::Tensor blocked(std::int64_t query_len, std::int64_t key_len,
                        const torch::Device& device) const;
};

// Keys and values of one attention source, split into heads: what the decoding cache stores.
// Appending writes into storage that grows by blocks of positions (keys/values are views of its
// first positions), so incremental decoding does not copy the whole prefix at every step.
struct KeyValue {
  torch::Tensor keys;    // [batch, heads, src_len, d_k]
  torch::Tensor values;  // [batch, heads, src_len, d_v]

  KeyValue() = default;
  KeyValue(torch::Tensor keys, torch::Tensor values)
      : keys(std::move(keys)), values(std::move(values)) {}
  bool empty() const { return !keys.defined(); }
  // Writes `step` after the cached positions (incremental self-attention).
  void append(const KeyValue& step);
  // Selects rows of the batch dimension (beam search).
  void reorder(const torch::Tensor& indices);

 private:
  torch::Tensor key_storage_;    // [batch, heads, capacity, d_k]; keys is its first positions
  torch::Tensor value_storage_;  // [batch, heads, capacity, d_v]
};

// softmax(Q K^T / sqrt(d_k)) with blocked pairs at zero weight. Rows where every key is blocked
// (an all-padding source) come out all zero instead of NaN.
// query [batch, heads, q_len, d_k], keys [batch, heads, k_len, d_k] -> [batch, heads, q_len, k_len]
torch::Tensor attention_weights(const torch::Tensor& query, const torch::Tensor& keys,
                                const torch::Tensor& blocked);

class MultiHeadAttentionImpl : public torch::nn::Module {
 public:
  // `dropout` applies to the attention weights (0 in the paper).
  MultiHeadAttentionImpl(std::int64_t d_model, std::int64_t heads, std::int64_t d_k,
                         std::int64_t d_v, double dropout);

  // query [batch, q_len, d_model] attends over source [batch, src_len, d_model]
  // -> [batch, q_len, d_model]
  torch::Tensor forward(const torch::Tensor& query, const torch::Tensor& source,
                        const AttentionMask& mask);

  // The two halves of forward, for decoding with a cache.
  KeyValue project(const torch::Tensor& source);
  // query [batch, q_len, d_model] over source keys/values of batch or batch / G rows: with
  // batch / G, query rows g * G .. g * G + G - 1 all attend over source row g (the beams of one
  // sentence share its encoder output); the mask's key_padding then has the source's rows.
  torch::Tensor attend(const torch::Tensor& query, const KeyValue& source,
                       const AttentionMask& mask);
  // For inspection (alignment heatmaps): when on, attend() keeps its last attention weights
  // [batch, heads, q_len, src_len], detached.
  void keep_weights(bool on) { keep_weights_ = on; }
  const torch::Tensor& last_weights() const { return last_weights_; }

 private:
  // [batch, len, heads * width] -> [batch, heads, len, width]
  torch::Tensor split_heads(const torch::Tensor& x, std::int64_t width) const;

  std::int64_t heads_, d_k_, d_v_;
  Linear w_q_{nullptr}, w_k_{nullptr}, w_v_{nullptr}, w_o_{nullptr};
  Dropout dropout_{nullptr};
  bool keep_weights_ = false;
  torch::Tensor last_weights_;
};
TORCH_MODULE(MultiHeadAttention);

}  // namespace nmt::model
