#include "trainer/optim/label_smoothing.h"

#include <ATen/core/grad_mode.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/exp.h>
#include <ATen/ops/full.h>
#include <ATen/ops/log_softmax.h>
#include <ATen/ops/logsumexp.h>
#include <ATen/ops/mm.h>
#include <ATen/ops/zeros.h>
#include <c10/util/Exception.h>
#include <torch/autograd.h>

#include <algorithm>

namespace nmt::optim {
namespace {

// The smoothed loss's gradient with respect to the logits, in place of their softmax `probs`
// [N, V]: per position i and vocabulary entry v,
//   d loss / d logit[i, v] = (softmax(logit)[i, v] - (1 - eps) [v == target_i] - eps / V) * s[i]
// with s = row_scale [N], the upstream gradient (0 at pads).
void to_logit_gradient(at::Tensor& probs, const at::Tensor& target, const at::Tensor& row_scale,
                       double eps) {
  probs.sub_(eps / static_cast<double>(probs.size(1)));
  probs.scatter_add_(1, target.unsqueeze(1),
                     at::full({target.size(0), 1}, -(1.0 - eps), probs.options()));
  probs.mul_(row_scale.unsqueeze(1));
}

// The smoothed loss as one autograd node. Its gradient with respect to the logits
// (to_logit_gradient) is computed from the saved log-probabilities in a few passes over [N, V];
// autograd through the composite expression (log_softmax, gather, mean, their sum) made about
// twice as many, each allocating an [N, V] tensor, which dominated a small model's step next to
// bf16 products.
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
    auto grad = at::exp(log_probs);  // [N, V] softmax
    to_logit_gradient(grad, target, keep * grads[0], eps);
    return {grad.to(type), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

// The output layer's loss as one node whose gradients were computed with its value. The loss is
// the graph's last node, so each chunk's gradient with respect to its logits is known in the
// forward pass up to the upstream scalar: the chunk's logits give their share of the gradients of
// hidden and weight there and are freed, and backward() only scales those by the upstream value.
struct OutputLayerLoss : public torch::autograd::Function<OutputLayerLoss> {
  // per_token [N] (0 at pads); grad_hidden [N, d_model] and grad_weight [V, d_model], the
  // gradients for an upstream gradient of 1.
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& /*hidden*/,
                            const at::Tensor& /*weight*/, const at::Tensor& per_token,
                            const at::Tensor& grad_hidden, const at::Tensor& grad_weight) {
    ctx->save_for_backward({grad_hidden, grad_weight});
    return per_token.sum();  // []
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    const auto saved = ctx->get_saved_variables();
    const auto scaled = [&](const at::Tensor& grad) {
      return grad * grads[0].to(grad.scalar_type());
    };
    return {scaled(saved[0]), scaled(saved[1]), at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

LossTerms output_layer_loss(const at::Tensor& hidden, const at::Tensor& weight,
                            const at::Tensor& target, double eps, std::int64_t pad_id,
                            at::ScalarType compute, std::int64_t chunk_rows) {
  TORCH_CHECK(hidden.dim() == 2 && weight.dim() == 2 && hidden.size(1) == weight.size(1) &&
                  target.dim() == 1 && target.size(0) == hidden.size(0),
              "output_layer_loss: expected hidden [N, d], weight [V, d] and target [N]");
  TORCH_CHECK(chunk_rows > 0, "output_layer_loss: chunk_rows must be positive");
  const auto work = compute == at::kDouble ? at::kDouble : at::kFloat;
  const auto rows = hidden.size(0);
  const bool gradients =
      at::GradMode::is_enabled() && (hidden.requires_grad() || weight.requires_grad());
  at::Tensor per_token, nll, grad_hidden, grad_weight;
  {
    at::NoGradGuard no_grad;
    const auto w = weight.detach().to(compute);     // [V, d]
    const auto keep = target.ne(pad_id).to(work);   // [N]
    per_token = at::empty({rows}, keep.options());  // [N]
    nll = at::empty({rows}, keep.options());        // [N]
    if (gradients) {
      grad_hidden = at::empty(hidden.sizes(), hidden.options());              // [N, d]
      grad_weight = at::zeros(weight.sizes(), weight.options().dtype(work));  // [V, d]
    }
    for (std::int64_t start = 0; start < rows; start += chunk_rows) {
      const auto n = std::min(chunk_rows, rows - start);
      const auto h = hidden.detach().narrow(0, start, n).to(compute);            // [n, d]
      const auto t = target.narrow(0, start, n);                                 // [n]
      auto logits = at::mm(h, w.t()).to(work);                                   // [n, V]
      const auto lse = logits.logsumexp(-1);                                     // [n]
      const auto chunk_nll = lse - logits.gather(1, t.unsqueeze(1)).squeeze(1);  // [n]
      nll.narrow(0, start, n).copy_(chunk_nll);
      per_token.narrow(0, start, n).copy_((1.0 - eps) * chunk_nll + eps * (lse - logits.mean(-1)));
      if (!gradients) continue;
      logits.sub_(lse.unsqueeze(1)).exp_();  // [n, V] softmax
      to_logit_gradient(logits, t, keep.narrow(0, start, n), eps);
      const auto g = logits.to(compute);                    // [n, V]
      grad_hidden.narrow(0, start, n).copy_(at::mm(g, w));  // [n, d]
      grad_weight.add_(at::mm(g.t(), h));                   // [V, d]
    }
    per_token.mul_(keep);
    nll.mul_(keep);
  }
  if (!gradients) return {per_token.sum(), nll.sum()};
  const auto smoothed = OutputLayerLoss::apply(hidden, weight, per_token, grad_hidden,
                                               grad_weight.to(weight.scalar_type()));
  return {smoothed, nll.sum()};
}

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
