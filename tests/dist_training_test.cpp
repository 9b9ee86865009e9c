// Data-parallel training on real MPI ranks (CTest runs this under mpirun -np 2 --oversubscribe):
// the bucketed reducer sums odd-sized float32 and float64 gradients exactly, with and without
// overlap and across accumulated batches; 2 ranks training k steps end with the parameters of
// 1 rank training on the union of their batches; and a 2-rank run resumed by 1 rank ends where
// an uninterrupted single-rank run ends.

#include <ATen/ATen.h>
#include <torch/cuda.h>

#include <filesystem>
#include <numeric>

#include "common/run_layout.h"
#include "mpi_test_main.h"
#include "tiny_training.h"
#include "trainer/distributed/device_collective.h"
#include "trainer/distributed/gradient_reducer.h"
#include "trainer/distributed/mpi_context.h"
#include "trainer/distributed/replica_check.h"
#include "trainer/runtime/device_assignment.h"
#include "trainer/train/trainer.h"

namespace nmt {
namespace {

using testing::load_model;
using testing::sink_in;
using testing::TempDir;

distributed::Communicator* g_world = nullptr;

// A scratch directory that every rank sees: rank 0 creates (and later removes) it.
class SharedDir {
 public:
  SharedDir() {
    if (g_world->is_root()) owned_ = std::make_unique<TempDir>();
    path_ = owned_ ? owned_->path().string() : "";
    g_world->broadcast(path_);
  }
  ~SharedDir() { g_world->barrier(); }
  std::string file(const std::string& name) const { return path_ + "/" + name; }
  const TempDir& temp() const { return *owned_; }

 private:
  std::unique_ptr<TempDir> owned_;
  std::string path_;
};

// Gradient of sum(p * c) is c: each tensor's gradient pattern depends on rank, element and batch.
at::Tensor coefficients(const at::Tensor& p, int rank, int batch, int tensor) {
  const auto index = at::arange(p.numel(), at::TensorOptions().dtype(p.scalar_type()));
  return ((index + 1) * (rank + 1) * 0.25 + (batch + 1) * (tensor + 1)).reshape(p.sizes());
}

void check_reducer(bool overlap, c10::Device device = c10::Device(c10::kCPU),
                   distributed::DeviceCollective* collective = nullptr) {
  std::vector<at::Tensor> params;
  const std::vector<std::vector<std::int64_t>> shapes = {{1}, {7}, {1023}, {3, 5, 7}, {13}, {2, 3}};
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const auto type = i >= 4 ? at::kDouble : at::kFloat;
    params.push_back(
        at::zeros(shapes[i], at::TensorOptions().dtype(type).device(device)).requires_grad_(true));
  }
  distributed::ReducerOptions options;
  options.bucket_mb = 600.0 / (1024 * 1024);  // 600 bytes: small tensors share, big ones split
  options.overlap = overlap;
  options.device_collective = collective;
  distributed::GradientReducer reducer(params, *g_world, options);
  EXPECT_GE(reducer.bucket_count(), 4u);
  const auto sizes = reducer.bucket_elements();
  EXPECT_EQ(std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0}),
            1 + 7 + 1023 + 105 + 13 + 6);

  const int rank = g_world->rank();
  for (int batch = 0; batch < 2; ++batch) {  // two accumulated batches; the second reduces
    at::Tensor loss = at::zeros({}, at::kDouble);
    for (std::size_t t = 0; t < params.size(); ++t) {
      loss = loss + (params[t] * coefficients(params[t], rank, batch, static_cast<int>(t)))
                        .sum()
                        .to(at::kDouble);
    }
    if (batch == 1) reducer.arm();
    loss.backward();
  }
  reducer.finish();
  EXPECT_EQ(reducer.overlapped_buckets(), overlap ? reducer.bucket_count() : 0u);
  for (std::size_t t = 0; t < params.size(); ++t) {
    at::Tensor expected = at::zeros_like(params[t]);
    for (int r = 0; r < g_world->size(); ++r) {
      for (int batch = 0; batch < 2; ++batch)
        expected += coefficients(params[t], r, batch, static_cast<int>(t)).to(device);
    }
    EXPECT_TRUE(at::allclose(params[t].grad(), expected, 1e-6, 0))
        << "tensor " << t << " overlap " << overlap;
    EXPECT_EQ(params[t].grad().scalar_type(), params[t].scalar_type());
  }
}

TEST(GradientReducer, SumsOddSizesAndMixedTypesOverRanks) {
  check_reducer(false);
}
TEST(GradientReducer, OverlappedHooksGiveTheSameSums) {
  check_reducer(true);
}

// The same sums through NCCL (c10d) on GPU buckets: one rank per GPU, so it runs where every rank
// has a GPU of its own (on one GPU: this binary started as a single process).
TEST(GradientReducer, NcclGivesTheSameSumsOnGpus) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  if (!distributed::nccl_available()) GTEST_SKIP() << "this LibTorch has no c10d NCCL";
  const int gpus = static_cast<int>(torch::cuda::device_count());
  if (gpus < g_world->local_size()) {
    GTEST_SKIP() << g_world->local_size() << " ranks on this node but " << gpus << " GPU(s)";
  }
  runtime::DeviceRequest request;
  request.local_rank = g_world->local_rank();
  request.local_size = g_world->local_size();
  request.visible = gpus;
  const c10::Device device(c10::kCUDA,
                           static_cast<c10::DeviceIndex>(runtime::assign_device(request).index));
  auto nccl = distributed::make_nccl_collective(*g_world, 60.0);
  check_reducer(false, device, nccl.get());
  check_reducer(true, device, nccl.get());
}

TEST(ReplicaCheck, BroadcastMakesReplicasEqualAndTheCheckSeesDifferences) {
  std::vector<at::Tensor> tensors = {at::full({5}, g_world->rank() + 1.0f)};
  EXPECT_THROW(distributed::verify_replicas(tensors, *g_world), std::runtime_error);
  distributed::broadcast_tensors(tensors, *g_world);
  EXPECT_TRUE(at::equal(tensors[0], at::full({5}, 1.0f)));
  EXPECT_NO_THROW(distributed::verify_replicas(tensors, *g_world));
}

// The runs compared below agree to the last bits (the tolerance is 1e-6) on any CPU (Xeon, Zen 3,
// Zen 4) because each micro-batch goes through the same kernels on either side: the same shapes,
// fp32 (tiny_config: no precision chosen by timing) and one BLAS thread in every rank and in rank
// 0's single-rank runs, whatever CPUs mpirun binds each rank to (another thread count may split a
// product differently); and a sum of two micro-batch gradients is the same in either order.
RunConfig equivalence_config(const std::string& data_dir) {
  auto config = testing::tiny_config(data_dir);
  config.train.threads = 1;
  // Dropout stays on: it is seeded per micro-batch from its place in the update, not per rank.
  config.data.max_src_tokens = config.data.max_tgt_tokens = 40;  // many small batches
  config.train.max_steps = 4;
  config.train.validate_every = 0;
  config.checkpoint.every_steps = 1;
  config.checkpoint.keep_last = 10;
  config.dist.bucket_mb = 0.05;  // several buckets
  return config;
}

void expect_same_parameters(const std::string& a_path, const std::string& b_path,
                            const RunConfig& config) {
  const auto a = load_model(a_path, config), b = load_model(b_path, config);
  const auto pa = a->named_parameters(), pb = b->named_parameters();
  for (const auto& item : pa) {
    const auto& x = item.value();
    const auto& y = pb[item.key()];
    const double scale = std::max(1e-3, y.abs().max().item<double>());
    const double diff = (x - y).abs().max().item<double>();
    EXPECT_LE(diff, 1e-6 * scale) << item.key() << ": " << a_path << " vs " << b_path;
  }
}

// 2 ranks x 1 batch per update and 1 rank x 2 accumulated batches see the same union of batches.
TEST(DataParallel, TwoRanksMatchOneRankOnTheUnionOfBatches) {
  ASSERT_EQ(g_world->size(), 2);
  SharedDir dir;
  std::string data = g_world->is_root() ? testing::write_data(dir.temp(), 96) : "";
  g_world->broadcast(data);
  const auto config = equivalence_config(data);
  train::Trainer(config, dir.file("two"), sink_in(dir.file("two")), *g_world).run(false);
  if (g_world->is_root()) {
    auto single = config;
    single.train.update_batches = 2;
    const auto result =
        train::Trainer(single, dir.file("one"), sink_in(dir.file("one"))).run(false);
    EXPECT_EQ(result.steps, 4);
    expect_same_parameters(run_layout::checkpoint_path(dir.file("two"), 4),
                           run_layout::checkpoint_path(dir.file("one"), 4), config);
    // Not vacuous: the parameters moved.
    const auto first = load_model(run_layout::checkpoint_path(dir.file("one"), 1), config);
    const auto last = load_model(run_layout::checkpoint_path(dir.file("one"), 4), config);
    EXPECT_FALSE(at::equal(first->parameters()[0], last->parameters()[0]));
  }
}

TEST(DataParallel, TwoRankRunResumedByOneRankMatchesOneRankThroughout) {
  SharedDir dir;
  std::string data = g_world->is_root() ? testing::write_data(dir.temp(), 96) : "";
  g_world->broadcast(data);
  auto config = equivalence_config(data);
  auto first_half = config;
  first_half.train.max_steps = 2;
  train::Trainer(first_half, dir.file("resumed"), sink_in(dir.file("resumed")), *g_world)
      .run(false);
  if (g_world->is_root()) {
    // The resumed run takes the checkpoint's 2 batches per update (both on this one rank).
    const auto resumed =
        train::Trainer(config, dir.file("resumed"), sink_in(dir.file("resumed"))).run(true);
    EXPECT_EQ(resumed.steps_this_process, 2);
    auto straight = config;
    straight.train.update_batches = 2;  // the same updates on one rank
    train::Trainer(straight, dir.file("straight"), sink_in(dir.file("straight"))).run(false);
    EXPECT_EQ(checkpoint::CheckpointReader(run_layout::checkpoint_path(dir.file("resumed"), 4))
                  .state()
                  .batch_in_epoch,
              checkpoint::CheckpointReader(run_layout::checkpoint_path(dir.file("straight"), 4))
                  .state()
                  .batch_in_epoch);
    expect_same_parameters(run_layout::checkpoint_path(dir.file("resumed"), 4),
                           run_layout::checkpoint_path(dir.file("straight"), 4), config);
  }
}

// A stop signal seen by one rank only (rank 1's source answers on its 3rd update): the decision
// travels in the update's collective, so both ranks finish update 3, rank 0 writes its
// checkpoint, and both return the same stop (an interrupt wins over a preemption).
TEST(DataParallel, AStopOnOneRankStopsEveryRankAfterTheSameUpdate) {
  SharedDir dir;
  std::string data = g_world->is_root() ? testing::write_data(dir.temp(), 96) : "";
  g_world->broadcast(data);
  auto config = equivalence_config(data);
  config.train.max_steps = 8;
  config.checkpoint.every_steps = 0;
  train::Trainer trainer(config, dir.file("run"), sink_in(dir.file("run")), *g_world);
  int polls = 0;
  const bool second = g_world->rank() == 1;
  trainer.set_stop_source([&polls, second] {
    ++polls;
    if (second && polls == 3) return StopReason::kInterrupted;
    return polls == 5 ? StopReason::kPreempted : StopReason::kNone;
  });
  const auto result = trainer.run(false);
  EXPECT_EQ(result.stopped, StopReason::kInterrupted);
  EXPECT_EQ(result.steps, 3);
  EXPECT_EQ(polls, 3);
  if (g_world->is_root()) {
    EXPECT_TRUE(std::filesystem::exists(run_layout::checkpoint_path(dir.file("run"), 3)));
    EXPECT_EQ(checkpoint::list_checkpoints(dir.file("run")).size(), 1u);
  }
}

// A cool-down that follows a time budget (train.cooldown with train.max_minutes binding): each
// rank's clock reads its own time, so the ranks take rank 0's fraction from the update's
// collective and apply the same rates; the replicas end bit-identical after several updates.
TEST(DataParallel, ATimeBudgetsCooldownGivesEveryRankTheSameRates) {
  SharedDir dir;
  std::string data = g_world->is_root() ? testing::write_data(dir.temp(), 96) : "";
  g_world->broadcast(data);
  auto config = equivalence_config(data);
  config.train.max_steps = 100000;  // the budget ends it: the rates follow the clock
  config.train.max_minutes = 0.05;
  config.train.cooldown = 1.0;
  config.checkpoint.every_steps = 0;
  train::Trainer trainer(config, dir.file("run"), sink_in(dir.file("run")), *g_world);
  std::vector<at::Tensor> parameters;  // the model's own tensors: their values at the end
  at::Tensor first;
  trainer.set_after_backward([&](std::int64_t step, const std::vector<at::Tensor>& p) {
    parameters = p;
    if (step == 1) first = p[0].detach().clone();
  });
  const auto result = trainer.run(false);
  EXPECT_TRUE(result.out_of_time);
  ASSERT_FALSE(parameters.empty());
  EXPECT_NO_THROW(distributed::verify_replicas(parameters, *g_world));
  if (result.steps >= 2) {
    // Not vacuous: the cooled-down rates were not all 0.
    EXPECT_FALSE(at::equal(first, parameters[0]));
  }
}

}  // namespace
}  // namespace nmt

int main(int argc, char** argv) {
  return nmt::testing::run_mpi_tests(argc, argv, nmt::g_world);
}
