#include "trainer/train/updater.h"

#include <algorithm>
#include <utility>

#include "trainer/optim/gradients.h"
#include "trainer/optim/lr_cooldown.h"
#include "trainer/optim/noam_schedule.h"
#include "trainer/runtime/device.h"
#include "trainer/train/batch_loss.h"

namespace nmt::train {

Updater::Updater(const RunConfig& config, model::Transformer model, optim::FusedAdam& adam,
                 BatchStream& batches, distributed::GradientReducer* reducer, c10::Device device,
                 runtime::Precision precision, GradientHook after_backward)
    : train_(config.train),
      d_model_(config.model.d_model),
      model_(std::move(model)),
      adam_(adam),
      batches_(batches),
      reducer_(reducer),
      device_(device),
      precision_(precision),
      after_backward_(std::move(after_backward)),
      scaler_(precision == runtime::Precision::kFp16),
      skipped_(config.train.max_skipped_updates) {}

void Updater::accumulate(std::int64_t step, UpdateStats& u) {
  const auto& t = train_;
  adam_.zero_grad();
  for (std::int64_t a = 0; a < t.accumulation; ++a) {
    const auto batch = batches_.next();
    runtime::seed_generator(device_,
                            micro_batch_seed(t.seed, step, batches_.last_index_in_update()));
    optim::LossTerms terms;
    {
      runtime::AutocastScope autocast(precision_, device_);
      terms =
          batch_loss(model_, batch.src, batch.tgt_in, batch.tgt_out, t.label_smoothing, precision_);
    }
    if (reducer_ && a + 1 == t.accumulation) reducer_->arm();
    (terms.smoothed * scaler_.scale()).backward();
    batches_.prefetch();  // the GPU is busy with the backward pass: build the next batch meanwhile
    const auto loss = terms.smoothed.detach();  // [] fp32
    u.loss_sum = a == 0 ? loss : u.loss_sum + loss;
    u.nll_sum = a == 0 ? terms.nll : u.nll_sum + terms.nll;
    u.votes.tgt_tokens += batch.tgt_tokens;
    u.votes.src_tokens += batch.src_tokens;
  }
  u.local_tokens = u.votes.src_tokens + u.votes.tgt_tokens;
}

// The update's loss is the mean over all its target tokens, of all ranks: the reducer left the
// sum over ranks in .grad, and the division shares the scaler's pass. The gradients were
// all-reduced, so every rank reads the same norm and takes the same decision.
void Updater::apply(std::int64_t step, UpdateStats& u) {
  const auto& t = train_;
  const auto parameters = model_->parameters();
  if (after_backward_) after_backward_(step, parameters);
  const bool high_scale = scaler_.enabled() && scaler_.scale() > 1.0;  // fp16 overflow is routine
  bool finite = scaler_.unscale(parameters,
                                static_cast<double>(std::max<std::int64_t>(u.votes.tgt_tokens, 1)));
  if (!scaler_.enabled()) {
    u.grad_norm = gradient_norm();
    finite = std::isfinite(u.grad_norm);
  }
  const bool admitted = skipped_.admit(step, finite, u.grad_norm, !high_scale);
  if (admitted && t.clip_norm > 0) optim::clip_gradient_norm(parameters, t.clip_norm);
  u.lr = optim::noam_learning_rate(step, d_model_, t.warmup_steps, t.lr_factor) *
         optim::cooldown_factor(u.votes.done_fraction, t.cooldown);
  if (admitted) adam_.step(u.lr);
  u.applied = admitted;
  scaler_.update(finite);
}

double Updater::gradient_norm() const {
  const auto norm = optim::gradient_norm(model_->parameters());
  return norm.defined() ? norm.item<double>() : 0.0;
}

}  // namespace nmt::train
