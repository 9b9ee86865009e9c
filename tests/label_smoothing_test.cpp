// The label-smoothed loss of paper section 5.4 against a hand computation and the composite
// definition, and the token count it sums over.

#include <ATen/ops/count_nonzero.h>
#include <ATen/ops/linear.h>
#include <ATen/ops/log_softmax.h>
#include <ATen/ops/randint.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "preprocess/vocabulary.h"
#include "test_utils.h"
#include "tiny_shard_dataset.h"
#include "trainer/data/batching.h"
#include "trainer/optim/label_smoothing.h"
#include "trainer/runtime/precision.h"

namespace nmt {
namespace {

using testing::TempDir;
using testing::tiny_dataset;

TEST(LabelSmoothing, MatchesHandComputation) {
  // Two positions over a vocabulary of 4, the second is padding (id 0) and must not count.
  const auto logits = at::tensor({1.0f, 2.0f, 0.5f, -1.0f, 3.0f, 3.0f, 3.0f, 3.0f}).reshape({2, 4});
  const auto target = at::tensor(std::vector<std::int64_t>{1, 0});
  const double eps = 0.1;
  const auto terms = optim::label_smoothed_loss(logits, target, eps, /*pad_id=*/0);
  // By hand: log-sum-exp of {1, 2, 0.5, -1}.
  const double lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(0.5) + std::exp(-1.0));
  const double nll = lse - 2.0;
  const double mean_neg_log_p = lse - (1.0 + 2.0 + 0.5 - 1.0) / 4.0;
  EXPECT_NEAR(terms.nll.item<double>(), nll, 1e-6);
  EXPECT_NEAR(terms.smoothed.item<double>(), (1 - eps) * nll + eps * mean_neg_log_p, 1e-6);
  // eps = 0 is plain cross-entropy.
  EXPECT_NEAR(optim::label_smoothed_loss(logits, target, 0.0, 0).smoothed.item<double>(), nll,
              1e-6);
}

TEST(LabelSmoothing, GradientFlowsOnlyThroughRealTokens) {
  auto logits =
      at::tensor({0.2f, 0.1f, 0.4f, 0.3f, 0.9f, 0.8f}).reshape({2, 3}).set_requires_grad(true);
  const auto target = at::tensor(std::vector<std::int64_t>{2, 0});
  optim::label_smoothed_loss(logits, target, 0.1, 0).smoothed.backward();
  EXPECT_GT(logits.grad()[0].abs().sum().item<float>(), 0.0f);
  EXPECT_EQ(logits.grad()[1].abs().sum().item<float>(), 0.0f);
}

// The loss's own backward (one node) against autograd through the composite definition, in double
// precision, with padding, for several eps; and in bf16 logits the gradient comes back in bf16.
TEST(LabelSmoothing, FusedGradientEqualsTheCompositeDefinition) {
  at::manual_seed(4);
  const auto base = at::randn({6, 11}, at::kDouble) * 3;
  const auto target = at::tensor(std::vector<std::int64_t>{3, 0, 10, 1, 0, 7});  // 0: pad
  for (const double eps : {0.0, 0.1, 0.3}) {
    auto fused = base.clone().set_requires_grad(true);
    auto composite = base.clone().set_requires_grad(true);
    const auto terms = optim::label_smoothed_loss(fused, target, eps, 0);
    (terms.smoothed * 1.7).backward();
    const auto log_probs = at::log_softmax(composite, -1);
    const auto keep = target.ne(0).to(at::kDouble);
    const auto nll = -log_probs.gather(1, target.unsqueeze(1)).squeeze(1);
    const auto reference = (((1 - eps) * nll - eps * log_probs.mean(-1)) * keep).sum();
    (reference * 1.7).backward();
    EXPECT_NEAR(terms.smoothed.item<double>(), reference.item<double>(), 1e-12) << eps;
    EXPECT_NEAR(terms.nll.item<double>(), (nll * keep).sum().item<double>(), 1e-12) << eps;
    EXPECT_TRUE(at::allclose(fused.grad(), composite.grad(), 1e-12, 1e-12)) << eps;
  }
  auto half = base.to(at::kBFloat16).set_requires_grad(true);
  optim::label_smoothed_loss(half, target, 0.1, 0).smoothed.backward();
  EXPECT_EQ(half.grad().scalar_type(), at::kBFloat16);
}

// A batch's tgt_tokens (host) is the count the loss sums over (device): the trainer divides the
// gradients by it without reading the device.
TEST(LabelSmoothing, TheBatchCountsTheTokensTheLossSums) {
  TempDir dir;
  const auto dataset = tiny_dataset(dir, 40);
  DataConfig config;
  data::TokenBatcher batcher(dataset, config, 3);
  const auto batch = batcher.make_batch({0, 5, 17, 30});
  const auto logits = at::zeros({batch.tgt_out.numel(), 50});  // uniform: nll = log 50 per token
  const auto terms =
      optim::label_smoothed_loss(logits, batch.tgt_out.reshape({-1}), 0.0, preprocess::kPadId);
  EXPECT_NEAR(terms.nll.item<double>() / std::log(50.0), static_cast<double>(batch.tgt_tokens),
              1e-3);
  EXPECT_LT(batch.tgt_tokens, batch.tgt_out.numel()) << "the batch has padding to leave out";
}

// The output layer and the loss in chunks of positions against the whole logits: the same loss,
// nll and gradients of the hidden states and the projection (double precision, with padding,
// chunks that do not divide the positions, one chunk of all, a chunk of one); in bf16 products,
// equal to the autocast path to bf16 rounding.
TEST(LabelSmoothing, OutputLayerInChunksEqualsTheWholeLogits) {
  at::manual_seed(5);
  const auto hidden0 = at::randn({37, 16}, at::kDouble);
  const auto weight0 = at::randn({29, 16}, at::kDouble) * 0.5;
  auto target = at::randint(1, 29, {37}, at::TensorOptions().dtype(at::kLong));
  target.index_put_({at::tensor(std::vector<std::int64_t>{0, 5, 36})}, 0);  // 0: pad
  auto hidden_ref = hidden0.clone().set_requires_grad(true);
  auto weight_ref = weight0.clone().set_requires_grad(true);
  const auto reference =
      optim::label_smoothed_loss(at::linear(hidden_ref, weight_ref), target, 0.1, 0);
  (reference.smoothed * 1.3).backward();
  for (const std::int64_t chunk : {8, 37, 1, 100}) {
    auto hidden = hidden0.clone().set_requires_grad(true);
    auto weight = weight0.clone().set_requires_grad(true);
    const auto terms = optim::output_layer_loss(hidden, weight, target, 0.1, 0, at::kDouble, chunk);
    (terms.smoothed * 1.3).backward();
    EXPECT_NEAR(terms.smoothed.item<double>(), reference.smoothed.item<double>(), 1e-10) << chunk;
    EXPECT_NEAR(terms.nll.item<double>(), reference.nll.item<double>(), 1e-10) << chunk;
    EXPECT_TRUE(at::allclose(hidden.grad(), hidden_ref.grad(), 1e-10, 1e-12)) << chunk;
    EXPECT_TRUE(at::allclose(weight.grad(), weight_ref.grad(), 1e-10, 1e-12)) << chunk;
    EXPECT_EQ(at::count_nonzero(hidden.grad()[5]).item<std::int64_t>(), 0) << "a pad's row";
  }
  {  // no autograd (validation): the same values, nothing kept for a backward pass
    at::NoGradGuard no_grad;
    const auto terms = optim::output_layer_loss(hidden0, weight0, target, 0.1, 0, at::kDouble, 8);
    EXPECT_NEAR(terms.smoothed.item<double>(), reference.smoothed.item<double>(), 1e-10);
  }

  const auto hidden_f = hidden0.to(at::kFloat), weight_f = weight0.to(at::kFloat);
  auto hidden_a = hidden_f.clone().set_requires_grad(true);
  auto weight_a = weight_f.clone().set_requires_grad(true);
  auto hidden_b = hidden_f.clone().set_requires_grad(true);
  auto weight_b = weight_f.clone().set_requires_grad(true);
  optim::LossTerms autocast_terms, chunked_terms;
  {
    runtime::AutocastScope autocast(runtime::Precision::kBf16, at::kCPU);
    autocast_terms = optim::label_smoothed_loss(at::linear(hidden_a, weight_a), target, 0.1, 0);
    chunked_terms = optim::output_layer_loss(hidden_b, weight_b, target, 0.1, 0, at::kBFloat16, 8);
  }
  autocast_terms.smoothed.backward();
  chunked_terms.smoothed.backward();
  EXPECT_NEAR(chunked_terms.smoothed.item<double>(), autocast_terms.smoothed.item<double>(),
              1e-3 * autocast_terms.smoothed.item<double>());
  EXPECT_TRUE(at::allclose(hidden_b.grad(), hidden_a.grad(), 2e-2, 2e-2));
  EXPECT_TRUE(at::allclose(weight_b.grad(), weight_a.grad(), 2e-2, 2e-2));
  EXPECT_EQ(hidden_b.grad().scalar_type(), at::kFloat);
}

}  // namespace
}  // namespace nmt
