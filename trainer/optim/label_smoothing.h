#pragma once
// Label-smoothed cross-entropy (paper section 5.4, eps_ls = 0.1; Szegedy et al. 2016). The target
// distribution puts 1 - eps on the reference token and spreads eps uniformly over the vocabulary:
//   loss_t = (1 - eps) * -log p(y_t) + eps * mean_v(-log p(v))
// summed over non-pad target positions. The plain negative log-likelihood is returned beside it,
// for perplexity = exp(nll / tokens).

#include <ATen/core/Tensor.h>

#include <cstdint>

namespace nmt::optim {

struct LossTerms {
  at::Tensor smoothed;  // scalar, summed over tokens: what training minimises
  at::Tensor nll;       // scalar, summed over tokens, detached
};
// The number of tokens counted is the batch's tgt_tokens (known on the host, so nothing here reads
// a value back from the device).

// logits [N, V] (any float type), target [N] int64 with `pad_id` marking ignored positions.
LossTerms label_smoothed_loss(const at::Tensor& logits, const at::Tensor& target, double eps,
                              std::int64_t pad_id);

// The output projection and this loss in one, over chunks of `chunk_rows` positions: a chunk's
// logits = hidden · weightᵀ [chunk_rows, V] exist only while that chunk is worked on, so memory
// holds one chunk's logits, never the batch's [N, V]. With autograd on, each chunk's share of the
// gradients of hidden and weight is computed from its logits right away (the loss is the graph's
// last node) and kept, [N, d_model] and [V, d_model]; backward only scales them. hidden
// [N, d_model] (the decoder's output), weight [V, d_model] (the output projection; the target
// embedding when shared), target [N] int64. The products run in `compute` (the type autocast
// gives them: runtime::matmul_type), the softmax in fp32 (fp64 for fp64). Equal to
// label_smoothed_loss(at::linear(hidden, weight), ...) to rounding, gradients included.
LossTerms output_layer_loss(const at::Tensor& hidden, const at::Tensor& weight,
                            const at::Tensor& target, double eps, std::int64_t pad_id,
                            at::ScalarType compute, std::int64_t chunk_rows);

}  // namespace nmt::optim
