// The decoder stack (paper section 3.1) and its incremental form. step() computes exactly what
// forward() computes at the last position, using cached keys/values instead of the prefix: the
// self-attention keys/values of every earlier position and the cross-attention keys/values of the
// encoder output, projected once per sentence.

#include "trainer/model/decoder.h"

#include <ATen/ops/cat.h>

namespace nmt::model {

void DecoderCache::reorder(const torch::Tensor& rows, const torch::Tensor& sources) {
  const auto check = [](const torch::Tensor& t, const char* what) {
    TORCH_CHECK(t.dim() == 1 && t.scalar_type() == at::kLong, "DecoderCache::reorder takes int64 [",
                what, "] indices, got ", t.sizes(), " ", t.scalar_type());
  };
  check(rows, "new_rows");
  const auto row_index = rows.to(tgt_padding.device());
  tgt_padding = tgt_padding.index_select(0, row_index);
  for (auto& layer : layers) layer.self.reorder(row_index);
  if (!sources.defined() && rows_per_source != 1) return;
  const auto source_index = sources.defined() ? sources.to(src_padding.device()) : row_index;
  check(source_index, "new_sources");
  TORCH_CHECK(source_index.size(0) * rows_per_source == row_index.size(0),
              "reorder: ", row_index.size(0), " rows for ", source_index.size(0), " sources of ",
              rows_per_source, " rows each");
  src_padding = src_padding.index_select(0, source_index);
  for (auto& layer : layers) layer.cross.reorder(source_index);
}

DecoderLayerImpl::DecoderLayerImpl(const ModelConfig& config) : placement_(norm_placement(config)) {
  const auto attention = [&] {
    return MultiHeadAttention(config.d_model, config.heads, config.d_k, config.d_v,
                              config.attention_dropout);
  };
  self_attn_ = register_module("self_attn", attention());
  cross_attn_ = register_module("cross_attn", attention());
  ffn_ = register_module("ffn", FeedForward(config.d_model, config.d_ff, config.ffn_dropout));
  norm1_ = register_module("norm1", make_layer_norm(config));
  norm2_ = register_module("norm2", make_layer_norm(config));
  norm3_ = register_module("norm3", make_layer_norm(config));
  dropout_ = register_module("dropout", Dropout(config.dropout));
}

torch::Tensor DecoderLayerImpl::feed_forward(const torch::Tensor& x) {
  return residual(x, norm3_, dropout_, placement_, [&](const torch::Tensor& y) { return ffn_(y); });
}

torch::Tensor DecoderLayerImpl::forward(const torch::Tensor& x, const torch::Tensor& memory,
                                        const DecoderMasks& masks) {
  auto h = residual(x, norm1_, dropout_, placement_,
                    [&](const torch::Tensor& y) { return self_attn_(y, y, masks.self); });
  h = residual(h, norm2_, dropout_, placement_,
               [&](const torch::Tensor& y) { return cross_attn_(y, memory, masks.cross); });
  return feed_forward(h);  // [batch, tgt_len, d_model]
}

torch::Tensor DecoderLayerImpl::step(const torch::Tensor& x, LayerCache& cache,
                                     const DecoderMasks& masks) {
  auto h = residual(x, norm1_, dropout_, placement_, [&](const torch::Tensor& y) {
    cache.self.append(self_attn_->project(y));  // [batch, heads, t + 1, d_*]
    return self_attn_->attend(y, cache.self, masks.self);
  });
  h = residual(h, norm2_, dropout_, placement_, [&](const torch::Tensor& y) {
    return cross_attn_->attend(y, cache.cross, masks.cross);
  });
  return feed_forward(h);  // [batch, 1, d_model]
}

KeyValue DecoderLayerImpl::project_memory(const torch::Tensor& memory) {
  return cross_attn_->project(memory);
}

DecoderImpl::DecoderImpl(const ModelConfig& config) {
  layers_ = register_module("layers", torch::nn::ModuleList());
  for (std::int64_t i = 0; i < config.layers; ++i) layers_->push_back(DecoderLayer(config));
  if (norm_placement(config) == NormPlacement::kPre) {
    norm_ = register_module("norm", make_layer_norm(config));
  }
}

torch::Tensor DecoderImpl::forward(const torch::Tensor& x, const torch::Tensor& memory,
                                   const DecoderMasks& masks) {
  auto h = x;  // [batch, tgt_len, d_model]
  for (std::size_t i = 0; i < layers_->size(); ++i) h = layer(i).forward(h, memory, masks);
  return has_final_norm() ? norm_(h) : h;
}

DecoderCache DecoderImpl::start(const torch::Tensor& memory, const torch::Tensor& src_padding,
                                std::int64_t rows_per_source) {
  TORCH_CHECK(memory.dim() == 3 && src_padding.dim() == 2 &&
                  memory.size(0) == src_padding.size(0) && memory.size(1) == src_padding.size(1),
              "memory [batch, src_len, d_model] and src_padding [batch, src_len] disagree: ",
              memory.sizes(), " vs ", src_padding.sizes());
  TORCH_CHECK(rows_per_source >= 1, "rows_per_source must be positive, got ", rows_per_source);
  DecoderCache cache;
  cache.rows_per_source = rows_per_source;
  cache.src_padding = src_padding;
  cache.tgt_padding =
      src_padding.new_zeros({src_padding.size(0) * rows_per_source, 0});  // [rows, 0] bool
  cache.layers.resize(layers_->size());
  for (std::size_t i = 0; i < layers_->size(); ++i) {
    cache.layers[i].cross = layer(i).project_memory(memory);
  }
  return cache;
}

torch::Tensor DecoderImpl::step(const torch::Tensor& x, const torch::Tensor& padding,
                                DecoderCache& cache) {
  TORCH_CHECK(x.dim() == 3 && x.size(1) == 1 && x.size(0) == cache.batch_size(),
              "decoder step takes [", cache.batch_size(), ", 1, d_model], got ", x.sizes());
  TORCH_CHECK(cache.layers.size() == layers_->size(), "cache was not made by this decoder");
  cache.tgt_padding = at::cat({cache.tgt_padding, padding.view({-1, 1})}, 1);  // [rows, t + 1]
  cache.target_padded = cache.target_padded || padding.any().item<bool>();
  const DecoderMasks masks{{cache.target_padded ? cache.tgt_padding : torch::Tensor(), true},
                           {cache.src_padding, false}};
  auto h = x;  // [batch, 1, d_model]
  for (std::size_t i = 0; i < layers_->size(); ++i) h = layer(i).step(h, cache.layers[i], masks);
  return has_final_norm() ? norm_(h) : h;
}

}  // namespace nmt::model
