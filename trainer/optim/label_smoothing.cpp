#include "trainer/optim/label_smoothing.h"

#include <ATen/ops/log_softmax.h>
#include <c10/util/Exception.h>

namespace nmt::optim {

LossTerms label_smoothed_loss(const at::Tensor& logits, const at::Tensor& target, double eps,
                              std::int64_t pad_id) {
  TORCH_CHECK(logits.dim() == 2 && target.dim() == 1 && logits.size(0) == target.size(0),
              "label_smoothed_loss: expected logits [N, V] and target [N]");
  // Softmax in fp32 even under mixed precision: the log of small probabilities needs the range.
  const auto log_probs = at::log_softmax(logits.to(at::kFloat), -1);      // [N, V]
  const auto keep = target.ne(pad_id);                                    // [N]
  const auto nll = -log_probs.gather(1, target.unsqueeze(1)).squeeze(1);  // [N]
  const auto uniform = -log_probs.mean(-1);                               // [N]
  const auto per_token = (1.0 - eps) * nll + eps * uniform;               // [N]
  const auto mask = keep.to(per_token.scalar_type());
  return {(per_token * mask).sum(), (nll * mask).sum().detach()};
}

}  // namespace nmt::optim
