// The training recipe's pieces (paper section 5): the learning-rate schedule at known steps, the
// label-smoothed loss against a hand computation, token-budget batching, the run config.

#include <ATen/ops/log_softmax.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/tensor.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <set>
#include <utility>
#include <vector>

#include "common/config_loader.h"
#include "preprocess/vocabulary.h"
#include "test_utils.h"
#include "trainer/data/batching.h"
#include "trainer/data/block_permutation.h"
#include "trainer/optim/adam_state.h"
#include "trainer/optim/fused_adam.h"
#include "trainer/optim/gradients.h"
#include "trainer/optim/label_smoothing.h"
#include "trainer/optim/lr_cooldown.h"
#include "trainer/optim/noam_schedule.h"
#include "trainer/train/batch_stream.h"
#include "trainer/train/checkpoint_policy.h"
#include "trainer/train/run_settings.h"
#include "trainer/train_config.h"

namespace nmt {
namespace {

using testing::TempDir;

TEST(NoamSchedule, KnownValues) {
  // Peak at the end of warmup: (d_model * warmup)^-0.5 = (512 * 4000)^-0.5.
  EXPECT_NEAR(optim::noam_learning_rate(4000, 512, 4000), 1.0 / std::sqrt(512.0 * 4000.0), 1e-15);
  EXPECT_NEAR(optim::noam_learning_rate(4000, 512, 4000), 6.987712429686844e-4, 1e-15);
  // Linear warmup: step 1 is warmup^-1.5 / sqrt(d_model).
  EXPECT_NEAR(optim::noam_learning_rate(1, 512, 4000), std::pow(4000.0, -1.5) / std::sqrt(512.0),
              1e-18);
  EXPECT_NEAR(optim::noam_learning_rate(2000, 512, 4000),
              0.5 * optim::noam_learning_rate(4000, 512, 4000), 1e-15);
  // Inverse square root decay after warmup: 4x the steps, half the rate.
  EXPECT_NEAR(optim::noam_learning_rate(16000, 512, 4000),
              0.5 * optim::noam_learning_rate(4000, 512, 4000), 1e-15);
  EXPECT_NEAR(optim::noam_learning_rate(100000, 512, 4000), 1.0 / std::sqrt(512.0 * 100000.0),
              1e-15);
  EXPECT_NEAR(optim::noam_learning_rate(4000, 1024, 4000, 2.0), 2.0 / std::sqrt(1024.0 * 4000.0),
              1e-15);
  EXPECT_THROW(optim::noam_learning_rate(0, 512, 4000), std::invalid_argument);
}

TEST(LrCooldown, LinearFromOneToZeroOverTheRunsLastFraction) {
  EXPECT_EQ(optim::cooldown_factor(0.0, 0.0), 1.0);  // no cool-down: the paper's schedule
  EXPECT_EQ(optim::cooldown_factor(0.999, 0.0), 1.0);
  EXPECT_EQ(optim::cooldown_factor(0.0, 0.25), 1.0);
  EXPECT_EQ(optim::cooldown_factor(0.75, 0.25), 1.0);  // where the cool-down starts
  EXPECT_NEAR(optim::cooldown_factor(0.8, 0.25), 0.8, 1e-12);
  EXPECT_NEAR(optim::cooldown_factor(0.9, 0.25), 0.4, 1e-12);
  EXPECT_EQ(optim::cooldown_factor(1.0, 0.25), 0.0);
  EXPECT_EQ(optim::cooldown_factor(1.5, 0.25), 0.0);          // past a time budget: never negative
  EXPECT_NEAR(optim::cooldown_factor(0.3, 1.0), 0.7, 1e-12);  // the whole run
  EXPECT_THROW(optim::cooldown_factor(0.5, 1.5), std::invalid_argument);
  EXPECT_THROW(optim::cooldown_factor(0.5, -0.1), std::invalid_argument);
  EXPECT_THROW(optim::cooldown_factor(std::nan(""), 0.5), std::invalid_argument);
}

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

// Writes a tiny split with pairs of lengths (i % 9 + 1, i % 7 + 1).
preprocess::ShardDataset tiny_dataset(const TempDir& dir, int pairs) {
  preprocess::ShardHeader header{"train", 100, "v", {}, {}};
  preprocess::ShardWriter writer(dir.path().string(), header, 1000, 0);
  for (int i = 0; i < pairs; ++i) {
    writer.add(std::vector<std::int32_t>(static_cast<std::size_t>(i % 9 + 1), 4 + i % 50),
               std::vector<std::int32_t>(static_cast<std::size_t>(i % 7 + 1), 5 + i % 40), i);
  }
  preprocess::Manifest m;
  m.vocab_sha256 = "v";
  m.vocab_size = 100;
  preprocess::SplitManifest split;
  split.name = "train";
  split.shards = writer.finish();
  m.splits.push_back(split);
  preprocess::write_manifest(dir.path().string(), m);
  return preprocess::ShardDataset::open(dir.path().string(), "train");
}

TEST(Batching, BudgetsCoverageDeterminismAndTensors) {
  TempDir dir;
  const auto dataset = tiny_dataset(dir, 500);
  DataConfig config;
  config.max_src_tokens = 40;
  config.max_tgt_tokens = 40;
  config.max_length = 9;  // drops pairs whose source has 9 tokens (+EOS = 10)
  config.bucket_pool = 4;
  data::TokenBatcher batcher(dataset, config, 7);
  EXPECT_EQ(batcher.skipped_too_long(), 500 / 9 + (500 % 9 > 8 ? 1 : 0));
  const auto plan = batcher.epoch_plan(0);
  std::set<std::int64_t> seen;
  for (const auto& batch : plan) {
    const auto b = batcher.make_batch(batch);
    EXPECT_LE(b.src.numel(), 40);  // padded budget
    EXPECT_LE(b.tgt_in.numel(), 40);
    for (auto i : batch) EXPECT_TRUE(seen.insert(i).second) << "pair twice in an epoch";
  }
  EXPECT_EQ(static_cast<std::int64_t>(seen.size()), batcher.eligible_pairs());
  EXPECT_EQ(batcher.epoch_plan(0), plan);  // same (seed, epoch): same plan
  EXPECT_NE(batcher.epoch_plan(1), plan);  // a new epoch reshuffles
  EXPECT_NE(data::TokenBatcher(dataset, config, 8).epoch_plan(0), plan);

  const auto b = batcher.make_batch({3});  // source 4 tokens of id 7, target 4 tokens of id 8
  EXPECT_EQ(b.src.sizes(), (std::vector<std::int64_t>{1, 5}));
  EXPECT_EQ(b.src[0][4].item<std::int64_t>(), preprocess::kEosId);
  EXPECT_EQ(b.tgt_in[0][0].item<std::int64_t>(), preprocess::kBosId);
  EXPECT_EQ(b.tgt_in[0][1].item<std::int64_t>(), 8);
  EXPECT_EQ(b.tgt_out[0][3].item<std::int64_t>(), 8);
  EXPECT_EQ(b.tgt_out[0][4].item<std::int64_t>(), preprocess::kEosId);
  EXPECT_EQ(b.tgt_tokens, 5);
  const auto padded = batcher.make_batch({0, 3});  // lengths 1 and 4: row 0 padded with 0
  EXPECT_EQ(padded.src[0][2].item<std::int64_t>(), preprocess::kPadId);
  EXPECT_EQ(padded.src_tokens, 2 + 5);
}

// The block order is a permutation of 0..n-1 for every n (cycle walking over the Feistel domain),
// a function of the key, and far from the identity.
TEST(BlockPermutation, IsABijectionForEverySizeAndKeyed) {
  for (const std::uint64_t n : {1u, 2u, 3u, 5u, 64u, 1000u, 4097u}) {
    const data::BlockPermutation order(n, 42);
    std::set<std::uint64_t> seen;
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto x = order(i);
      EXPECT_LT(x, n);
      seen.insert(x);
    }
    EXPECT_EQ(seen.size(), n) << n;
  }
  const data::BlockPermutation a(1000, 1), b(1000, 2);
  int same = 0, fixed = 0;
  for (std::uint64_t i = 0; i < 1000; ++i) {
    same += a(i) == b(i);
    fixed += a(i) == i;
  }
  EXPECT_LT(same, 20);
  EXPECT_LT(fixed, 20);
}

// An epoch is planned pool by pool: EpochPlan hands out exactly epoch_plan()'s batches in order,
// nothing past the end, the same batch again after seeking back, and each pool draws its pairs
// from blocks spread over the split.
TEST(Batching, EpochPlanStreamsPoolsAndMixesBlocks) {
  TempDir dir;
  const auto dataset = tiny_dataset(dir, 3000);
  DataConfig config;
  config.max_src_tokens = 60;
  config.max_tgt_tokens = 60;
  config.bucket_pool = 8;  // ~8 batches of ~12 pairs: pools of 2 blocks of 64 pairs
  data::TokenBatcher batcher(dataset, config, 5);
  ASSERT_GT(batcher.pools(), 10);
  const auto whole = batcher.epoch_plan(3);
  data::EpochPlan plan(batcher, 3);
  for (std::size_t b = 0; b < whole.size(); ++b) {
    const auto* batch = plan.batch(static_cast<std::int64_t>(b));
    ASSERT_NE(batch, nullptr) << b;
    EXPECT_EQ(*batch, whole[b]) << b;
  }
  EXPECT_EQ(plan.batch(static_cast<std::int64_t>(whole.size())), nullptr);
  EXPECT_EQ(*plan.batch(1), whole[1]);  // back to the first pool: planned again, the same
  EXPECT_EQ(*data::EpochPlan(batcher, 3).batch(static_cast<std::int64_t>(whole.size()) - 1),
            whole.back());

  std::set<std::int64_t> blocks, first_pool_blocks;
  for (const auto& batch : batcher.pool_plan(3, 0)) {
    for (const auto i : batch) first_pool_blocks.insert(i / data::kBlockPairs);
  }
  for (const auto& batch : batcher.pool_plan(3, 1)) {
    for (const auto i : batch) blocks.insert(i / data::kBlockPairs);
  }
  EXPECT_GE(first_pool_blocks.size(), 2u);
  for (const auto block : blocks) EXPECT_EQ(first_pool_blocks.count(block), 0u);
  // Not the split's order: the first pool's blocks are not the first blocks.
  EXPECT_NE(first_pool_blocks, (std::set<std::int64_t>{0, 1}));
  EXPECT_NE(batcher.pool_plan(4, 0), batcher.pool_plan(3, 0));
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

// Random parameters with random gradients, three of different shapes, the same for both copies.
std::vector<at::Tensor> adam_parameters(std::uint64_t seed) {
  at::manual_seed(seed);
  std::vector<at::Tensor> ps;
  for (const auto& shape : std::vector<std::vector<std::int64_t>>{{4, 3}, {7}, {2, 2, 5}}) {
    ps.push_back(at::randn(shape).set_requires_grad(true));
  }
  return ps;
}

TEST(FusedAdam, SameUpdatesAsLibTorchsAdamAndTheSameState) {
  if (!optim::fused_adam_available(c10::kCPU)) {
    GTEST_SKIP() << "this LibTorch line has no fused Adam on the CPU (the current line has)";
  }
  auto fused_params = adam_parameters(5), plain_params = adam_parameters(5);
  optim::AdamSettings settings;
  optim::FusedAdam fused(fused_params, settings);
  settings.allow_fused = false;
  optim::FusedAdam plain(plain_params, settings);
  ASSERT_TRUE(fused.fused());
  ASSERT_FALSE(plain.fused());
  for (int step = 1; step <= 4; ++step) {
    at::manual_seed(100 + step);
    for (std::size_t i = 0; i < fused_params.size(); ++i) {
      const auto g = at::randn(fused_params[i].sizes());
      fused_params[i].mutable_grad() = g.clone();
      plain_params[i].mutable_grad() = g.clone();
    }
    fused.step(1e-2 / step);
    plain.step(1e-2 / step);
  }
  for (std::size_t i = 0; i < fused_params.size(); ++i) {
    EXPECT_TRUE(at::allclose(fused_params[i], plain_params[i], 1e-5, 1e-6)) << i;
    EXPECT_FALSE(at::allclose(fused_params[i], adam_parameters(5)[i], 1e-3, 1e-3)) << "moved";
  }
  // The state a checkpoint saves: same step counts and moments.
  for (std::size_t i = 0; i < fused_params.size(); ++i) {
    const auto& a = static_cast<const torch::optim::AdamParamState&>(
        *fused.state().state().at(optim::adam_state_key(fused.state().state(), fused_params[i])));
    const auto& b = static_cast<const torch::optim::AdamParamState&>(
        *plain.state().state().at(optim::adam_state_key(plain.state().state(), plain_params[i])));
    EXPECT_EQ(a.step(), 4);
    EXPECT_EQ(b.step(), 4);
    EXPECT_TRUE(at::allclose(a.exp_avg_sq(), b.exp_avg_sq(), 1e-5, 1e-8)) << i;
  }
}

TEST(Gradients, ClippingScalesToTheMaximumNormOnlyWhenAbove) {
  auto p = at::zeros({2}).set_requires_grad(true);
  auto q = at::zeros({1}).set_requires_grad(true);
  p.mutable_grad() = at::tensor({3.0f, 0.0f});
  q.mutable_grad() = at::tensor({4.0f});
  EXPECT_NEAR(optim::gradient_norm({p, q}).item<double>(), 5.0, 1e-6);
  optim::clip_gradient_norm({p, q}, 10.0);
  EXPECT_NEAR(optim::gradient_norm({p, q}).item<double>(), 5.0, 1e-6) << "below: untouched";
  optim::clip_gradient_norm({p, q}, 1.0);
  EXPECT_NEAR(optim::gradient_norm({p, q}).item<double>(), 1.0, 1e-5);
  EXPECT_NEAR(p.grad()[0].item<double>() / q.grad()[0].item<double>(), 0.75, 1e-6) << "direction";
}

// Sharding by global update: an update takes the plan's next update_batches batches whatever the
// number of ranks, rank r of N the r-th run of update_batches / N of them; an epoch's tail that
// cannot fill an update is left for the next epoch. prefetch() never moves the position and next()
// hands out the same batches with or without it; seek() resumes at a stored position.
TEST(BatchStream, ShardsEachUpdateByRankPrefetchesWithoutMovingAndResumes) {
  TempDir dir;
  const auto dataset = tiny_dataset(dir, 200);
  DataConfig config;
  config.max_src_tokens = 60;
  config.max_tgt_tokens = 60;
  data::TokenBatcher batcher(dataset, config, 11);
  const auto plan0 = batcher.epoch_plan(0);
  const auto plan1 = batcher.epoch_plan(1);
  const auto cpu = c10::Device(c10::kCPU);
  constexpr std::int64_t kUpdate = 6;
  const auto updates_per_epoch = static_cast<std::int64_t>(plan0.size()) / kUpdate;
  ASSERT_GE(updates_per_epoch, 2);

  train::BatchStream one(batcher, 0, 1, kUpdate, cpu);  // 1 rank: all 6 batches
  std::vector<train::BatchStream> ranks;                // 3 ranks: 2 batches each
  for (int r = 0; r < 3; ++r) ranks.emplace_back(batcher, r, 3, kUpdate, cpu);
  train::BatchStream prefetching(batcher, 1, 3, kUpdate, cpu);
  EXPECT_EQ(ranks[1].batches_per_rank(), 2);
  for (std::int64_t k = 0; k < updates_per_epoch + 2; ++k) {
    const bool first_epoch = k < updates_per_epoch;
    const auto& plan = first_epoch ? plan0 : plan1;
    const auto base = (first_epoch ? k : k - updates_per_epoch) * kUpdate;
    const auto expected = [&](std::int64_t i) {
      return batcher.make_batch(plan[static_cast<std::size_t>(base + i)]).src;
    };
    for (std::int64_t i = 0; i < kUpdate; ++i) {
      EXPECT_TRUE(at::equal(one.next().src, expected(i))) << k << "/" << i;
      EXPECT_EQ(one.last_index_in_update(), i);
    }
    for (int r = 0; r < 3; ++r) {
      for (std::int64_t a = 0; a < 2; ++a) {
        EXPECT_TRUE(at::equal(ranks[r].next().src, expected(2 * r + a))) << k << "/" << r;
        EXPECT_EQ(ranks[r].last_index_in_update(), 2 * r + a);
      }
      EXPECT_TRUE(ranks[r].position() == one.position()) << "the same updates on 1 and 3 ranks";
    }
    for (std::int64_t a = 0; a < 2; ++a) {
      prefetching.prefetch();
      const auto before = prefetching.position();
      prefetching.prefetch();
      EXPECT_TRUE(prefetching.position() == before);
      EXPECT_TRUE(at::equal(prefetching.next().src, expected(2 + a))) << k;
    }
  }
  EXPECT_EQ(one.position().epoch, 1) << "the tail of epoch 0 was left for epoch 1";
  EXPECT_EQ(one.position().batch_in_epoch, 2 * kUpdate);

  train::BatchStream resumed(batcher, 0, 1, kUpdate, cpu);  // 3 ranks' position, on 1 rank
  resumed.seek(ranks[2].position());
  const auto next_expected = one.next();
  EXPECT_TRUE(at::equal(resumed.next().src, next_expected.src));
  EXPECT_THROW(train::BatchStream(batcher, 0, 4, kUpdate, cpu), std::invalid_argument)
      << "6 batches cannot be shared by 4 ranks";
}

// The update size: the config's when set, else the resumed checkpoint's, else accumulation x
// ranks; accumulation becomes this rank's share. And the seed of a micro-batch depends on the
// update and the index in it, nothing else.
TEST(RunSettings, UpdateSizeComesFromTheConfigTheCheckpointOrAccumulation) {
  const auto self = dist::Communicator::self();
  RunConfig fresh;
  fresh.train.accumulation = 3;
  train::choose_update_batches(fresh, nullptr, self);
  EXPECT_EQ(fresh.train.update_batches, 3);
  EXPECT_EQ(fresh.train.accumulation, 3);

  RunConfig stored;
  stored.train.update_batches = 4;  // e.g. 2 ranks x 2
  RunConfig resumed;                // asks for nothing: keeps the checkpoint's
  train::choose_update_batches(resumed, &stored, self);
  EXPECT_EQ(resumed.train.update_batches, 4);
  EXPECT_EQ(resumed.train.accumulation, 4) << "one rank accumulates all 4";

  RunConfig asked;
  asked.train.update_batches = 6;
  train::choose_update_batches(asked, &stored, self);
  EXPECT_EQ(asked.train.update_batches, 6) << "an explicit setting wins";

  EXPECT_EQ(train::micro_batch_seed(1, 10, 0), train::micro_batch_seed(1, 10, 0));
  std::set<std::uint64_t> seeds;
  for (std::int64_t step = 1; step <= 20; ++step) {
    for (std::int64_t i = 0; i < 8; ++i) seeds.insert(train::micro_batch_seed(1, step, i));
  }
  EXPECT_EQ(seeds.size(), 160u) << "every (step, index) its own seed";
  EXPECT_NE(train::micro_batch_seed(1, 10, 0), train::micro_batch_seed(2, 10, 0));
}

TEST(CheckpointPolicy, DueByStepsMinutesAtTheLastStepAndOnEarlyStop) {
  using Clock = train::CheckpointPolicy::Clock;
  CheckpointConfig c;
  c.every_steps = 100;
  c.every_minutes = 10;
  const auto t0 = Clock::time_point{} + std::chrono::hours(1);
  train::CheckpointPolicy policy(c, 1050, t0);
  EXPECT_TRUE(policy.due(200, false, false));
  EXPECT_FALSE(policy.due(201, false, false));
  EXPECT_TRUE(policy.due(201, true, false)) << "the minutes ran out";
  EXPECT_TRUE(policy.due(1050, false, false)) << "the last step";
  EXPECT_TRUE(policy.due(777, false, true)) << "stopping early";
  EXPECT_FALSE(policy.time_is_up(t0 + std::chrono::minutes(9)));
  EXPECT_TRUE(policy.time_is_up(t0 + std::chrono::minutes(10)));
  policy.saved(t0 + std::chrono::minutes(10));
  EXPECT_FALSE(policy.time_is_up(t0 + std::chrono::minutes(19))) << "counted from the last save";
  c.every_minutes = 0;
  EXPECT_FALSE(train::CheckpointPolicy(c, 10, t0).time_is_up(t0 + std::chrono::hours(100)));
}

TEST(EarlyStopping, StopsAfterPatienceValidationsWithoutANewBest) {
  train::ValidationRecord record{std::numeric_limits<double>::infinity(), 0};
  EXPECT_TRUE(train::record_validation(record, 2.0));
  EXPECT_FALSE(train::record_validation(record, 2.5));
  EXPECT_FALSE(train::should_stop_early(record, 2));
  EXPECT_FALSE(train::record_validation(record, 2.0)) << "equal is no improvement";
  EXPECT_TRUE(train::should_stop_early(record, 2));
  EXPECT_FALSE(train::should_stop_early(record, 0)) << "0: never";
  EXPECT_TRUE(train::record_validation(record, 1.5));
  EXPECT_EQ(record.without_improvement, 0);
  EXPECT_EQ(record.best_nll, 1.5);
}

TEST(RunConfig, DefaultsAreThePaperBaseAndFilesAreStrict) {
  const RunConfig defaults;
  EXPECT_EQ(defaults.model.d_model, 512);
  EXPECT_EQ(defaults.model.heads, 8);
  EXPECT_DOUBLE_EQ(defaults.train.adam_beta2, 0.98);
  EXPECT_DOUBLE_EQ(defaults.train.adam_eps, 1e-9);
  EXPECT_EQ(defaults.train.warmup_steps, 4000);
  TempDir dir;
  testing::write_text(dir.file("r.yaml"), "model:\n  d_model: 256\ntrain:\n  max_steps: 10\n");
  const auto config =
      load_run_config(dir.file("r.yaml"), {"model.heads=4", "train.label_smoothing=0.2"});
  EXPECT_EQ(config.model.d_model, 256);
  EXPECT_EQ(config.model.heads, 4);
  EXPECT_DOUBLE_EQ(config.train.label_smoothing, 0.2);
  // Round trip through the YAML stored in checkpoints.
  const auto again = parse_run_config(to_yaml(config), "stored");
  EXPECT_EQ(to_yaml(again), to_yaml(config));
  NMT_EXPECT_THROW_WITH(load_run_config(dir.file("r.yaml"), {"model.dmodel=3"}), ConfigError,
                        "unknown key 'model.dmodel'");
  NMT_EXPECT_THROW_WITH(load_run_config(dir.file("r.yaml"), {"train.max_steps=many"}), ConfigError,
                        "train.max_steps", "expected an integer");
  // Variants are parsed once, at load: an unknown one names its key and the choices.
  NMT_EXPECT_THROW_WITH(load_run_config(dir.file("r.yaml"), {"train.precision=fp8"}), ConfigError,
                        "train.precision", "expected auto, fp32, bf16, fp16");
  NMT_EXPECT_THROW_WITH(load_run_config(dir.file("r.yaml"), {"dist.backend=gloo"}), ConfigError,
                        "dist.backend", "expected auto, mpi, mpi-staged, nccl");
  const auto bf16 = load_run_config(dir.file("r.yaml"), {"train.precision=bf16"});
  EXPECT_EQ(bf16.train.precision, runtime::Precision::kBf16);
  EXPECT_NE(to_yaml(bf16).find("precision: bf16"), std::string::npos);
}

TEST(RunConfig, DecodeSectionIsThePapersByDefaultStoredAndChecked) {
  const RunConfig defaults;
  EXPECT_EQ(defaults.decode.average_last, 5);
  EXPECT_EQ(defaults.decode.beam, 4);
  EXPECT_DOUBLE_EQ(defaults.decode.alpha, 0.6);
  TempDir dir;
  testing::write_text(dir.file("r.yaml"), "decode:\n  beam: 6\n  alpha: 1.25\n");
  const auto config = load_run_config(dir.file("r.yaml"), {"decode.average_last=12"});
  EXPECT_EQ(config.decode.beam, 6);
  EXPECT_DOUBLE_EQ(config.decode.alpha, 1.25);
  EXPECT_EQ(config.decode.average_last, 12);
  // Stored with the rest of the config (config.yaml, checkpoints), so the tools find it there.
  const auto again = parse_run_config(to_yaml(config), "stored");
  EXPECT_EQ(again.decode.beam, 6);
  EXPECT_DOUBLE_EQ(again.decode.alpha, 1.25);
  EXPECT_EQ(again.decode.average_last, 12);
  // A config stored before the section existed gets the paper's settings.
  const auto older = parse_run_config("model:\n  d_model: 256\n", "older");
  EXPECT_EQ(older.decode.beam, 4);
  NMT_EXPECT_THROW_WITH(load_run_config(dir.file("r.yaml"), {"decode.length_penalty=1"}),
                        ConfigError, "unknown key 'decode.length_penalty'");
  for (const auto& [override_text, field] : std::vector<std::pair<std::string, std::string>>{
           {"decode.beam=0", "decode.beam"},
           {"decode.alpha=-1", "decode.alpha"},
           {"decode.average_last=0", "decode.average_last"}}) {
    NMT_EXPECT_THROW_WITH(load_run_config(dir.file("r.yaml"), {override_text}).validate(),
                          std::invalid_argument, field);
  }
}

}  // namespace
}  // namespace nmt
