#include "trainer/train/trainer.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/cuda.h>
#include <torch/nn/utils/clip_grad.h>
#include <torch/optim/adam.h>
#include <torch/utils.h>

#include <chrono>
#include <cmath>
#include <filesystem>

#include "common/atomic_file.h"
#include "common/progress.h"
#include "preprocess/vocabulary.h"
#include "trainer/data/batching.h"
#include "trainer/dist/gradient_reducer.h"
#include "trainer/dist/replica_check.h"
#include "trainer/model/transformer.h"
#include "trainer/optim/label_smoothing.h"
#include "trainer/optim/noam_schedule.h"
#include "trainer/runtime/blas_backend.h"
#include "trainer/runtime/cuda_info.h"
#include "trainer/runtime/device.h"
#include "trainer/runtime/precision.h"
#include "trainer/train/evaluation.h"

namespace nmt::train {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Sums over all ranks, except the local_* fields (this rank's share, for its own tokens/s).
struct UpdateStats {
  double loss_sum = 0, nll_sum = 0;
  std::int64_t tgt_tokens = 0, src_tokens = 0;
  std::int64_t local_tokens = 0;    // source + target tokens of this rank's batches
  double allreduce_seconds = 0.0;   // this rank's wait for the gradient all-reduce
  bool checkpoint_by_time = false;  // rank 0's clock decides, so every rank agrees
};

}  // namespace

struct Trainer::Impl {
  RunConfig config;
  std::string run_dir;
  std::shared_ptr<MetricsSink> sink;
  dist::Communicator comm = dist::Communicator::self();
  std::unique_ptr<dist::DeviceCollective> device_collective;  // NCCL, on CUDA when available
  std::unique_ptr<dist::GradientReducer> reducer;             // with several ranks
  double allreduce_seconds = 0.0, step_seconds_total = 0.0;
  c10::Device device{c10::kCPU};
  preprocess::ShardDataset train_data, valid_data;
  std::unique_ptr<data::TokenBatcher> train_batches, valid_batches;
  model::Transformer model{nullptr};
  std::unique_ptr<torch::optim::Adam> adam;
  runtime::LossScaler scaler{false};
  checkpoint::TrainingState state;
  data::BatchPlan plan;  // of state.epoch
  std::int64_t plan_epoch = -1;
  Clock::time_point last_checkpoint = Clock::now();
  Clock::time_point run_start = Clock::now();
  double elapsed_before = 0.0;  // training seconds of earlier processes (from the checkpoint)

  void setup();
  void setup_data_parallel();
  data::Batch next_batch();
  UpdateStats update();
  double gradient_norm() const;
  SplitScore validate();
  double validation_bleu();
  std::unique_ptr<preprocess::Vocabulary> vocab;  // loaded for validation BLEU only
  void after_update(const UpdateStats& u, double step_seconds, ProgressMeter& progress,
                    TrainResult& result);
  void log_update(const UpdateStats& u, double step_seconds);
  bool validate_and_keep_best(TrainResult& result);
  void log_validation_bleu();
  bool maybe_checkpoint(const UpdateStats& u, const TrainResult& result);
  void save(const std::string& path);
  void log_rank_throughput(const UpdateStats& u, double step_seconds);
};

void Trainer::Impl::setup() {
  const auto& t = config.train;
  device = runtime::select_device(t.device);
  // One GPU per rank: a bare "cuda"/"auto" becomes the local rank's device.
  if (device.is_cuda() && comm.size() > 1 && t.device.find(':') == std::string::npos) {
    device =
        runtime::device_for_rank(comm.local_rank(), static_cast<int>(torch::cuda::device_count()));
  }
  if (device.is_cpu()) runtime::configure_cpu_threads(t.threads);
  runtime::check_precision(t.precision, device);
  if (device.is_cuda()) runtime::configure_cuda_matmuls(t.precision);
  scaler = runtime::LossScaler(t.precision == "fp16");
  train_data = preprocess::ShardDataset::open(config.data.dir, config.data.train_split);
  train_batches = std::make_unique<data::TokenBatcher>(train_data, config.data, t.seed);
  if (!config.data.valid_split.empty()) {
    preprocess::DatasetOptions same_vocab;
    same_vocab.expect_vocab_sha256 = train_data.manifest().vocab_sha256;
    valid_data =
        preprocess::ShardDataset::open(config.data.dir, config.data.valid_split, same_vocab);
    valid_batches = std::make_unique<data::TokenBatcher>(valid_data, config.data, t.seed);
  }
  spdlog::info("data: {} training pairs ({} longer than {} skipped), {} validation pairs",
               train_batches->eligible_pairs(), train_batches->skipped_too_long(),
               config.data.max_length, valid_batches ? valid_batches->eligible_pairs() : 0);
  torch::manual_seed(t.seed);
  model = model::Transformer(config.model);
  model->to(device);
  adam = std::make_unique<torch::optim::Adam>(
      model->parameters(),
      torch::optim::AdamOptions(0.0).betas({t.adam_beta1, t.adam_beta2}).eps(t.adam_eps));
}

data::Batch Trainer::Impl::next_batch() {
  while (true) {
    if (plan_epoch != state.epoch) {
      plan = train_batches->epoch_plan(state.epoch);
      plan_epoch = state.epoch;
      if (plan.empty()) throw std::runtime_error("no training batches: is the train split empty?");
    }
    // Each micro-step takes one batch per rank (rank r: the r-th); an epoch's last batches that
    // cannot give every rank one are left for the next epoch's shuffle.
    if (state.batch_in_epoch + comm.size() <= static_cast<std::int64_t>(plan.size())) break;
    if (state.batch_in_epoch == 0) {
      throw std::runtime_error(fmt::format("an epoch has {} batches, fewer than the {} ranks",
                                           plan.size(), comm.size()));
    }
    ++state.epoch;
    state.batch_in_epoch = 0;
  }
  auto batch =
      train_batches->make_batch(plan[static_cast<std::size_t>(state.batch_in_epoch + comm.rank())]);
  state.batch_in_epoch += comm.size();
  batch.src = batch.src.to(device);
  batch.tgt_in = batch.tgt_in.to(device);
  batch.tgt_out = batch.tgt_out.to(device);
  return batch;
}

UpdateStats Trainer::Impl::update() {
  const auto& t = config.train;
  UpdateStats u;
  comm.set_step(state.step + 1);
  adam->zero_grad();
  for (std::int64_t a = 0; a < t.accumulation; ++a) {
    const auto batch = next_batch();
    optim::LossTerms terms;
    {
      runtime::AutocastScope autocast(t.precision);
      const auto logits = model->forward(batch.src, batch.tgt_in);  // [batch, tgt_len, vocab]
      terms = optim::label_smoothed_loss(logits.reshape({-1, logits.size(-1)}),
                                         batch.tgt_out.reshape({-1}), t.label_smoothing,
                                         preprocess::kPadId);
    }
    if (reducer && a + 1 == t.accumulation) reducer->arm();
    (terms.smoothed * scaler.scale()).backward();
    u.loss_sum += terms.smoothed.item<double>();
    u.nll_sum += terms.nll.item<double>();
    u.tgt_tokens += terms.tokens;
    u.src_tokens += batch.src_tokens;
  }
  u.local_tokens = u.src_tokens + u.tgt_tokens;
  if (reducer) {
    comm.take_wait_seconds();
    reducer->finish();
    u.allreduce_seconds = comm.take_wait_seconds();
    const bool by_time = comm.is_root() && config.checkpoint.every_minutes > 0 &&
                         seconds_since(last_checkpoint) >= 60.0 * config.checkpoint.every_minutes;
    std::vector<double> sums = {u.loss_sum, u.nll_sum, static_cast<double>(u.tgt_tokens),
                                static_cast<double>(u.src_tokens), by_time ? 1.0 : 0.0};
    comm.allreduce_sum(sums);
    u.loss_sum = sums[0];
    u.nll_sum = sums[1];
    u.tgt_tokens = static_cast<std::int64_t>(sums[2]);
    u.src_tokens = static_cast<std::int64_t>(sums[3]);
    u.checkpoint_by_time = sums[4] > 0;
  }
  // Token-averaged gradients: the update's loss is the mean over all its target tokens (of all
  // ranks: the reducer left the sum over ranks in .grad).
  const bool finite = scaler.unscale(model->parameters());
  for (auto& p : model->parameters()) {
    if (p.grad().defined())
      p.grad().div_(static_cast<double>(std::max<std::int64_t>(u.tgt_tokens, 1)));
  }
  if (t.clip_norm > 0) torch::nn::utils::clip_grad_norm_(model->parameters(), t.clip_norm);
  const double lr =
      optim::noam_learning_rate(state.step + 1, config.model.d_model, t.warmup_steps, t.lr_factor);
  for (auto& group : adam->param_groups())
    static_cast<torch::optim::AdamOptions&>(group.options()).lr(lr);
  if (finite) adam->step();
  scaler.update(finite);
  ++state.step;
  return u;
}

double Trainer::Impl::gradient_norm() const {
  double squares = 0;
  for (const auto& p : model->parameters()) {
    if (p.grad().defined()) squares += p.grad().pow(2).sum().item<double>();
  }
  return std::sqrt(squares);
}

SplitScore Trainer::Impl::validate() {
  if (!valid_batches) return {};
  return score_split(model, *valid_batches, config.train.label_smoothing, config.train.precision,
                     device, comm);
}

double Trainer::Impl::validation_bleu() {
  const auto& t = config.train;
  if (!vocab) {
    vocab = std::make_unique<preprocess::Vocabulary>(preprocess::Vocabulary::load(
        (fs::path(config.data.dir) / preprocess::kVocabularyFile).string()));
  }
  BleuSettings settings;
  settings.beam = t.valid_bleu_beam;
  settings.sentences = t.valid_bleu_sentences;
  return split_bleu(model, valid_data, *vocab, device, settings);
}

// Rank 0 writes; the replicas are identical.
void Trainer::Impl::save(const std::string& path) {
  if (!comm.is_root()) return;
  fs::create_directories(fs::path(path).parent_path());
  state.elapsed_seconds = elapsed_before + seconds_since(run_start);
  checkpoint::save_checkpoint(path, *model, adam.get(), state, config);
  last_checkpoint = Clock::now();
}

// Every rank reports its own throughput and all-reduce wait through rank 0, so a straggler shows
// in the tracker as one rank's low tokens/s and the others' long waits.
void Trainer::Impl::log_rank_throughput(const UpdateStats& u, double step_seconds) {
  const auto tok_s = comm.gather(static_cast<double>(u.local_tokens) / step_seconds);
  const auto waits = comm.gather(u.allreduce_seconds / step_seconds);
  if (!comm.is_root()) return;
  for (int r = 0; r < comm.size(); ++r) {
    sink->log(fmt::format("train/rank{}/tokens_per_s", r), state.step, tok_s[r]);
    sink->log(fmt::format("train/rank{}/allreduce_fraction", r), state.step, waits[r]);
  }
}

// The train/* metrics and the progress line of one update (rank 0 writes; every rank joins the
// collectives behind the gradient norm and the per-rank throughput).
void Trainer::Impl::log_update(const UpdateStats& u, double step_seconds) {
  const auto& t = config.train;
  const std::int64_t step = state.step;
  if (comm.size() > 1) log_rank_throughput(u, step_seconds);
  const double tokens = static_cast<double>(std::max<std::int64_t>(u.tgt_tokens, 1));
  const double lr =
      optim::noam_learning_rate(step, config.model.d_model, t.warmup_steps, t.lr_factor);
  const double tok_s = static_cast<double>(u.src_tokens + u.tgt_tokens) / step_seconds;
  const double grad_norm = gradient_norm();
  if (!comm.is_root()) return;
  sink->log("train/loss", step, u.loss_sum / tokens);
  sink->log("train/nll", step, u.nll_sum / tokens);
  sink->log("train/ppl", step, std::exp(u.nll_sum / tokens));
  sink->log("train/lr", step, lr);
  sink->log("train/grad_norm", step, grad_norm);
  sink->log("train/tokens_per_s", step, tok_s);
  sink->log("train/ms_per_step", step, 1000.0 * step_seconds);
  std::string memory;
  if (device.is_cuda()) {
    const double peak_gib =
        static_cast<double>(runtime::cuda_peak_memory_bytes(device.index())) / (1 << 30);
    sink->log("gpu/peak_memory_gib", step, peak_gib);
    memory = fmt::format(", peak {:.2f} GiB on {}", peak_gib, device.str());
  }
  spdlog::info(
      "step {}: loss {:.3f}, ppl {:.2f}, lr {:.3g}, {:.0f} tokens/s, {:.0f} ms/step{}{}", step,
      u.loss_sum / tokens, std::exp(u.nll_sum / tokens), lr, tok_s, 1000.0 * step_seconds, memory,
      comm.size() > 1 ? fmt::format(" ({} ranks, {:.0f}% waiting on all-reduce)", comm.size(),
                                    100.0 * u.allreduce_seconds / step_seconds)
                      : "");
}

// Validation perplexity (every rank, a collective), the best checkpoint and early stopping.
// Returns whether rank 0 wrote a checkpoint the others must wait for.
bool Trainer::Impl::validate_and_keep_best(TrainResult& result) {
  const auto& t = config.train;
  const std::int64_t step = state.step;
  const auto v = validate();
  sink->log("valid/nll", step, v.nll);
  sink->log("valid/loss", step, v.loss);
  sink->log("valid/ppl", step, v.ppl);
  if (comm.is_root()) {
    spdlog::info("step {}: validation nll {:.4f}, perplexity {:.2f} ({} tokens)", step, v.nll,
                 v.ppl, v.tokens);
  }
  bool saved = false;
  if (v.nll < state.best_valid_nll) {
    state.best_valid_nll = v.nll;
    state.validations_without_improvement = 0;
    save((fs::path(run_dir) / "checkpoints" / "best.h5").string());
    saved = true;
  } else {
    ++state.validations_without_improvement;
  }
  result.early_stopped =
      t.early_stopping > 0 && state.validations_without_improvement >= t.early_stopping;
  return saved;
}

// Rank 0 decodes the validation set alone (beam search is not data parallel).
void Trainer::Impl::log_validation_bleu() {
  if (!comm.is_root()) return;
  const auto& t = config.train;
  const double bleu = validation_bleu();
  sink->log("valid/bleu", state.step, bleu);
  spdlog::info("step {}: validation BLEU {:.2f} ({})", state.step, bleu,
               t.valid_bleu_beam == 1 ? "greedy" : fmt::format("beam {}", t.valid_bleu_beam));
}

// A periodic checkpoint by steps or minutes, and always the last one. Returns whether one was
// saved.
bool Trainer::Impl::maybe_checkpoint(const UpdateStats& u, const TrainResult& result) {
  const auto& c = config.checkpoint;
  const std::int64_t step = state.step;
  const bool by_steps = c.every_steps > 0 && step % c.every_steps == 0;
  const bool by_time = comm.size() > 1 ? u.checkpoint_by_time
                                       : c.every_minutes > 0 && seconds_since(last_checkpoint) >=
                                                                    60.0 * c.every_minutes;
  if (!(by_steps || by_time || step == config.train.max_steps || result.early_stopped)) {
    return false;
  }
  save(checkpoint::checkpoint_path(run_dir, step));
  if (comm.is_root()) checkpoint::prune_checkpoints(run_dir, c.keep_last);
  last_checkpoint = Clock::now();
  return true;
}

void Trainer::Impl::after_update(const UpdateStats& u, double step_seconds, ProgressMeter& progress,
                                 TrainResult& result) {
  const auto& t = config.train;
  const std::int64_t step = state.step;
  const bool last = step == t.max_steps;
  const auto due = [&](std::int64_t every) { return every > 0 && (step % every == 0 || last); };
  result.last_train_loss =
      u.loss_sum / static_cast<double>(std::max<std::int64_t>(u.tgt_tokens, 1));
  allreduce_seconds += u.allreduce_seconds;
  step_seconds_total += step_seconds;
  if (step % t.log_every == 0 || last) log_update(u, step_seconds);
  if (comm.is_root()) {
    progress.update(step, static_cast<double>(step) / static_cast<double>(t.max_steps));
  }
  bool root_worked = false;  // rank 0 wrote or decoded alone; the others wait for it below
  if (valid_batches && due(t.validate_every)) root_worked |= validate_and_keep_best(result);
  if (valid_batches && due(t.valid_bleu_every)) {
    log_validation_bleu();
    root_worked = true;
  }
  root_worked |= maybe_checkpoint(u, result);
  if (root_worked && comm.size() > 1) {
    dist::Communicator::LongWait patient(comm);
    comm.barrier();
  }
  sink->flush();
}

// The ranks become one data-parallel job: hang detection on, rank 0's parameters everywhere
// (checked), a dropout stream of its own per rank, and the gradient reducer.
void Trainer::Impl::setup_data_parallel() {
  if (comm.size() == 1) return;
  const auto& d = config.dist;
  dist::HangOptions hang;
  hang.timeout_s = d.hang_timeout_s;
  hang.long_timeout_s = d.root_work_timeout_s;
  comm.watch_for_hangs(hang);
  auto tensors = model->parameters();
  for (const auto& b : model->buffers()) tensors.push_back(b);
  dist::broadcast_tensors(tensors, comm);
  dist::verify_replicas(tensors, comm);
  torch::manual_seed(config.train.seed + 1000003ull * static_cast<std::uint64_t>(comm.rank()) +
                     static_cast<std::uint64_t>(state.step));
  dist::ReducerOptions options;
  options.bucket_mb = d.bucket_mb;
  options.overlap = d.overlap;
  // CUDA: NCCL when this LibTorch has it (auto) or when asked for; else CUDA-aware MPI when the
  // MPI library says it is (auto) or when asked for (mpi); else host staging.
  const bool cuda = device.is_cuda();
  if (d.backend == "nccl" || (cuda && d.backend == "auto" && dist::nccl_available())) {
    if (!cuda) throw std::runtime_error("dist.backend nccl needs a CUDA device (train.device)");
    device_collective = dist::make_nccl_collective(comm, d.hang_timeout_s);
    options.device_collective = device_collective.get();
  }
  options.device_buffers =
      cuda && (d.backend == "mpi" || (d.backend == "auto" && dist::Communicator::cuda_aware()));
  reducer = std::make_unique<dist::GradientReducer>(model->parameters(), comm, options);
  const auto sizes = reducer->bucket_elements();
  if (comm.is_root()) {
    spdlog::info(
        "data parallel: {} ranks ({} on this node), {} gradient buckets (largest {} values), "
        "overlap {}, {}",
        comm.size(), comm.local_size(), sizes.size(), *std::max_element(sizes.begin(), sizes.end()),
        d.overlap ? "on" : "off",
        !cuda                    ? "MPI on host memory"
        : device_collective      ? device_collective->name()
        : options.device_buffers ? "CUDA-aware MPI"
                                 : "MPI via pinned host buffers");
  }
}

Trainer::Trainer(RunConfig config, std::string run_dir, std::shared_ptr<MetricsSink> sink,
                 dist::Communicator comm)
    : impl_(std::make_unique<Impl>()) {
  config.validate();
  impl_->config = std::move(config);
  impl_->run_dir = std::move(run_dir);
  impl_->sink = std::move(sink);
  impl_->comm = std::move(comm);
}

Trainer::~Trainer() = default;

TrainResult Trainer::run(bool resume) {
  auto& m = *impl_;
  m.setup();
  const auto existing = checkpoint::list_checkpoints(m.run_dir);
  if (resume && !existing.empty()) {
    m.state = checkpoint::load_checkpoint(existing.back(), *m.model, m.adam.get(), m.config);
    spdlog::info("resumed from {} at step {} (epoch {}, batch {})", existing.back(), m.state.step,
                 m.state.epoch, m.state.batch_in_epoch);
  } else if (!existing.empty()) {
    throw std::runtime_error(m.run_dir +
                             " already holds checkpoints: pass --resume to continue it, "
                             "or choose another --run-dir");
  }
  m.setup_data_parallel();
  if (m.comm.is_root()) {
    fs::create_directories(m.run_dir);
    write_file_atomically((fs::path(m.run_dir) / "config.yaml").string(), to_yaml(m.config));
  }
  TrainResult result;
  for (const auto& p : m.model->parameters()) result.parameters += p.numel();
  spdlog::info("model: {} parameters on {}", result.parameters, runtime::describe_device(m.device));
  m.model->train();
  ProgressMeter progress("train", "steps", 30.0);
  const auto start = Clock::now();
  const std::int64_t first_step = m.state.step;
  m.run_start = start;
  m.elapsed_before = m.state.elapsed_seconds;
  while (m.state.step < m.config.train.max_steps && !result.early_stopped) {
    const auto step_start = Clock::now();
    const auto u = m.update();
    m.after_update(u, seconds_since(step_start), progress, result);
  }
  result.seconds = seconds_since(start);
  result.allreduce_fraction =
      m.step_seconds_total > 0 ? m.allreduce_seconds / m.step_seconds_total : 0.0;
  result.steps = m.state.step;
  result.best_valid_nll = m.state.best_valid_nll;
  if (m.comm.is_root()) progress.finish(m.state.step - first_step);  // this process's steps
  return result;
}

}  // namespace nmt::train
