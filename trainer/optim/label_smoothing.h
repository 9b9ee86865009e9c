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

}  // namespace nmt::optim
