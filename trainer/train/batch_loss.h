#pragma once
// The label-smoothed loss of a batch, as training minimises it and validation reports it: the
// model's encoder and decoder, then the output projection and the loss together in chunks of
// positions (optim::output_layer_loss), so that a batch's logits never exist whole.

#include <ATen/core/Tensor.h>

#include <cstdint>

#include "trainer/config/precision_mode.h"
#include "trainer/model/transformer.h"
#include "trainer/optim/label_smoothing.h"

namespace nmt::train {

// Bytes of fp32 logits in one chunk of the output layer.
inline constexpr std::int64_t kOutputChunkBytes = std::int64_t{128} << 20;

// Positions a chunk of the output layer holds: kOutputChunkBytes of fp32 logits, at least one.
std::int64_t output_chunk_rows(std::int64_t vocab_size);

// src [batch, src_len], tgt_in [batch, tgt_len] (BOS first), tgt_out [batch, tgt_len] (EOS last;
// pads ignored). Called under `precision`'s autocast (runtime::AutocastScope), whose matrix-product
// type the output layer takes too.
optim::LossTerms batch_loss(model::Transformer& model, const at::Tensor& src,
                            const at::Tensor& tgt_in, const at::Tensor& tgt_out,
                            double label_smoothing, runtime::Precision precision);

}  // namespace nmt::train
