#pragma once
// The decoder stack (paper section 3.1): N identical layers of masked multi-head self-attention,
// multi-head attention over the encoder output, and the position-wise feed-forward network, each
// wrapped in a residual connection and LayerNorm. Also the key/value cache of incremental decoding.

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/normalization.h>
#include "trainer/model/dropout.h"

#include <cstdint>
#include <vector>

#include "trainer/config/model_config.h"
#include "trainer/model/attention.h"
#include "trainer/model/feed_forward.h"
#include "trainer/model/sublayer.h"

namespace nmt::model {

struct DecoderMasks {
  AttentionMask self;   // target padding, causal
  AttentionMask cross;  // source padding
};

// What one decoder layer keeps between decoding steps.
struct LayerCache {
  KeyValue self;   // the target so far, one position appended per step: [rows, heads, t, d_*]
  KeyValue cross;  // the encoder output, projected once: [sources, heads, src_len, d_*]
};

// The state of incremental decoding: one LayerCache per decoder layer and the padding masks.
// Each source sentence is decoded by `rows_per_source` consecutive target rows (beam search: its
// beams), which share the source's cross-attention keys/values: the rows are never expanded.
struct DecoderCache {
  std::vector<LayerCache> layers;
  torch::Tensor src_padding;  // [sources, src_len] bool, true at source padding
  torch::Tensor tgt_padding;  // [rows, t] bool, true where a fed token was padding
  std::int64_t rows_per_source = 1;
  bool target_padded = false;  // whether tgt_padding has a true anywhere (else no mask is needed)

  std::int64_t length() const { return tgt_padding.size(1); }      // positions decoded so far
  std::int64_t batch_size() const { return tgt_padding.size(0); }  // target rows
  std::int64_t sources() const { return src_padding.size(0); }
  // Keeps target rows `rows` [new_rows] int64, in that order. With one row per source and no
  // `sources`, the sources go with their rows (greedy decoding: the rows still decoding). With
  // several rows per source, each row must come from a row of the same source (beam search: the
  // surviving hypotheses), and the sources stay unless `sources` [new_sources] int64 names the
  // ones kept, in the order of the new rows (beam search dropping finished sentences).
  void reorder(const torch::Tensor& rows, const torch::Tensor& sources = {});
};

class DecoderLayerImpl : public torch::nn::Module {
 public:
  explicit DecoderLayerImpl(const ModelConfig& config);

  // x [batch, tgt_len, d_model], memory [batch, src_len, d_model] -> [batch, tgt_len, d_model]
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& memory,
                        const DecoderMasks& masks);
  // One new position x [batch, 1, d_model]; appends its keys/values to cache.self.
  torch::Tensor step(const torch::Tensor& x, LayerCache& cache, const DecoderMasks& masks);
  // Projects the encoder output for cross-attention: LayerCache::cross.
  KeyValue project_memory(const torch::Tensor& memory);
  MultiHeadAttentionImpl& cross_attention() { return *cross_attn_; }

 private:
  torch::Tensor feed_forward(const torch::Tensor& x);

  NormPlacement placement_;
  MultiHeadAttention self_attn_{nullptr}, cross_attn_{nullptr};
  FeedForward ffn_{nullptr};
  torch::nn::LayerNorm norm1_{nullptr}, norm2_{nullptr}, norm3_{nullptr};
  Dropout dropout_{nullptr};
};
TORCH_MODULE(DecoderLayer);

class DecoderImpl : public torch::nn::Module {
 public:
  explicit DecoderImpl(const ModelConfig& config);

  // x: embedded target [batch, tgt_len, d_model] -> hidden [batch, tgt_len, d_model]
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& memory,
                        const DecoderMasks& masks);

  // memory [sources, src_len, d_model], src_padding [sources, src_len] bool -> an empty cache for
  // sources * rows_per_source target rows
  DecoderCache start(const torch::Tensor& memory, const torch::Tensor& src_padding,
                     std::int64_t rows_per_source = 1);
  // x: embedded token at position cache.length() [rows, 1, d_model]; padding [rows] bool
  // -> hidden [rows, 1, d_model]
  torch::Tensor step(const torch::Tensor& x, const torch::Tensor& padding, DecoderCache& cache);

  bool has_final_norm() const { return !norm_.is_empty(); }
  std::size_t num_layers() const { return layers_->size(); }
  DecoderLayerImpl& layer(std::size_t i) { return layers_->at<DecoderLayerImpl>(i); }

 private:
  torch::nn::ModuleList layers_{nullptr};
  torch::nn::LayerNorm norm_{nullptr};  // pre-norm only
};
TORCH_MODULE(Decoder);

}  // namespace nmt::model
