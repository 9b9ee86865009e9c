#include "trainer/optim/label_smoothing.h"

#include <ATen/core/grad_mode.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/full.h>
#include <ATen/ops/log_softmax.h>
#include <c10/util/Exception.h>
#include <torch/autograd.h>

namespace nmt::optim {
namespace {

// The smoothed loss as one autograd node. Its gradient with respect to the logits is, per kept
// position i and vocabulary entry v (q the smoothed target distribution),
//   d loss / d logit[i, v] = softmax(logit)[i, v] - (1 - eps) [v == target_i] - eps / V,
// computed from the saved log-probabilities in a few passes over [N, V]; autograd through the
// composite expression (log_softmax, gather, mean, their sum) made about twice as many, each
// allocating an [N, V] tensor, which dominated a small model's step next to bf16 products.
struct SmoothedCrossEntropy : public torch::autograd::Function<SmoothedCrossEntropy> {
  // log_probs [N, V] fp32 (or fp64), target [N] int64, keep [N] and per_token [N] (the smoothed
  // loss of each position, computed by the caller) in the log-probabilities' type.
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& logits,
                            const at::Tensor& log_probs, const at::Tensor& target,
                            const at::Tensor& keep, const at::Tensor& per_token, double eps) {
    ctx->save_for_backward({log_probs, target, keep});
    ctx->saved_data["eps"] = eps;
    ctx->saved_data["type"] = static_cast<std::int64_t>(logits.scalar_type());
    return (per_token * keep).sum();  // []
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto& log_probs = saved[0];
    const auto& target = saved[1];
    const auto& keep = saved[2];
    const double eps = ctx->saved_data["eps"].toDouble();
    const auto type = static_cast<at::ScalarType>(ctx->saved_data["type"].toInt());
    const auto vocab = static_cast<double>(log_probs.size(1));
    auto grad = at::exp(log_probs);  // [N, V] softmax
    grad.sub_(eps / vocab);
    grad.scatter_add_(1, target.unsqueeze(1),
                      at::full({target.size(0), 1}, -(1.0 - eps), grad.options()));
    grad.mul_((keep * grads[0]).unsqueeze(1));  // pads get 0
    return {grad.to(type), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

LossTerms label_smoothed_loss(const at::Tensor& logits, const at::Tensor& target, double eps,
                              std::int64_t pad_id) {
  TORCH_CHECK(logits.dim() == 2 && target.dim() == 1 && logits.size(0) == target.size(0),
              "label_smoothed_loss: expected logits [N, V] and target [N]");
  // Softmax in fp32 even under mixed precision: the log of small probabilities needs the range.
  const auto work = logits.scalar_type() == at::kDouble ? at::kDouble : at::kFloat;
  // Everything but the node runs without autograd: the node has its own backward.
  at::Tensor log_probs, keep, nll, per_token;
  {
    at::NoGradGuard no_grad;
    log_probs = at::log_softmax(logits.detach().to(work), -1);   // [N, V]
    keep = target.ne(pad_id).to(work);                           // [N]
    nll = -log_probs.gather(1, target.unsqueeze(1)).squeeze(1);  // [N]
    per_token = (1.0 - eps) * nll - eps * log_probs.mean(-1);    // [N]
  }
  const auto smoothed =
      SmoothedCrossEntropy::apply(logits, log_probs, target, keep, per_token, eps);
  return {smoothed, (nll * keep).sum()};
}

}  // namespace nmt::optim
