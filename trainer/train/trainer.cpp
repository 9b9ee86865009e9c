#include "trainer/train/trainer.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/cuda.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <optional>

#include "common/atomic_file.h"
#include "common/progress.h"
#include "preprocess/vocabulary.h"
#include "trainer/data/batching.h"
#include "trainer/dist/gradient_reducer.h"
#include "trainer/dist/replica_check.h"
#include "trainer/model/transformer.h"
#include "trainer/optim/fused_adam.h"
#include "trainer/optim/gradients.h"
#include "trainer/optim/label_smoothing.h"
#include "trainer/optim/lr_cooldown.h"
#include "trainer/optim/noam_schedule.h"
#include "trainer/runtime/allocator.h"
#include "trainer/runtime/blas_backend.h"
#include "trainer/runtime/cuda_info.h"
#include "trainer/runtime/device.h"
#include "trainer/runtime/precision.h"
#include "trainer/train/batch_stream.h"
#include "trainer/train/checkpoint_policy.h"
#include "trainer/train/evaluation.h"
#include "trainer/train/run_settings.h"
#include "trainer/train/skipped_updates.h"

namespace nmt::train {
namespace {

// The data's SentencePiece model, which every checkpoint carries so that it translates on its own
// (checkpoint.h); empty, with a warning, when the data folder has none (shards made by hand).
std::string vocabulary_to_embed(const std::string& data_dir, const preprocess::Manifest& manifest) {
  const std::string path = (std::filesystem::path(data_dir) / manifest.vocab_file).string();
  if (!std::filesystem::exists(path)) {
    spdlog::warn("{} not found: checkpoints will not carry their SentencePiece model", path);
    return {};
  }
  std::string model = preprocess::Vocabulary::load(path).serialized();
  const std::string sha = preprocess::Vocabulary::from_serialized(model, path).sha256();
  if (sha != manifest.vocab_sha256) {
    throw std::runtime_error(fmt::format(
        "{} has SHA-256 {}, but the shards' manifest records {}: the data folder mixes two "
        "preprocessing runs; preprocess it again",
        path, sha, manifest.vocab_sha256));
  }
  return model;
}

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// This rank's device, logged by every rank with its host and the reason. A CUDA device goes
// through runtime::assign_device: the node's ranks take distinct GPUs (cuda:i for local rank i,
// cuda:0 where Slurm binds one per task), unless train.allow_shared_gpu lets them share.
c10::Device choose_device(const TrainConfig& t, const dist::Communicator& comm,
                          const runtime::LauncherVariables& launcher) {
  c10::Device device = runtime::select_device(t.device);
  std::string why = "train.device " + t.device;
  if (device.is_cuda()) {
    runtime::DeviceRequest request;
    request.local_rank = comm.local_rank();
    request.local_size = comm.local_size();
    request.visible = static_cast<int>(torch::cuda::device_count());
    if (t.device.find(':') != std::string::npos) request.index = device.index();
    request.allow_shared = t.allow_shared_gpu;
    request.launcher = launcher;
    const auto assignment = runtime::assign_device(request);
    device = c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(assignment.index));
    why = assignment.reason;
  } else if (t.device == "auto") {
    why = "train.device auto, and CUDA is not available";
  }
  spdlog::info("rank {} of {} on {} (local rank {} of {}): {}; {}", comm.rank(), comm.size(),
               comm.rank_names()[static_cast<std::size_t>(comm.rank())], comm.local_rank(),
               comm.local_size(), device.str(), why);
  return device;
}

// Token counts are sums over all ranks; the loss sums are this rank's, on the device, read (and
// summed over ranks) only when logged; local_* fields are this rank's share, for its own tokens/s.
struct UpdateStats {
  at::Tensor loss_sum, nll_sum;  // 0-dim, this rank's batches
  std::int64_t tgt_tokens = 0, src_tokens = 0;
  std::int64_t local_tokens = 0;        // source + target tokens of this rank's batches
  double grad_norm = std::nan("");      // before clipping; NaN when not read (fp16)
  double allreduce_seconds = 0.0;       // this rank's wait for the gradient all-reduce
  bool checkpoint_by_time = false;      // rank 0's clock decides, so every rank agrees
  bool out_of_time = false;             // train.max_minutes spent (rank 0's clock, agreed)
  double lr = 0.0;                      // the rate this update was given (applied or skipped)
  StopReason stop = StopReason::kNone;  // a stop signal on any rank: every rank stops here
};

// A stop seen by any rank, agreed on in the update's collective (`votes`: ranks that saw
// SIGTERM/SIGUSR1, ranks that saw SIGINT, ranks that cannot record): a run that cannot record
// stops as such (it is not resumed blindly by a requeue), and a person's interrupt wins over
// preemption.
StopReason agreed_stop(double preempted_votes, double interrupted_votes, double unrecorded_votes) {
  if (unrecorded_votes > 0) return StopReason::kUnrecorded;
  if (interrupted_votes > 0) return StopReason::kInterrupted;
  return preempted_votes > 0 ? StopReason::kPreempted : StopReason::kNone;
}

// The updates between two log steps: their tokens (all ranks; local_tokens this rank's) and time.
struct LogWindow {
  std::int64_t steps = 0, tokens = 0, local_tokens = 0;
  double seconds = 0.0, allreduce_seconds = 0.0;
  void add(const UpdateStats& u, double step_seconds) {
    ++steps;
    tokens += u.src_tokens + u.tgt_tokens;
    local_tokens += u.local_tokens;
    seconds += step_seconds;
    allreduce_seconds += u.allreduce_seconds;
  }
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
  runtime::Precision precision = runtime::Precision::kFp32;  // resolved: never auto
  preprocess::ShardDataset train_data, valid_data;
  std::unique_ptr<data::TokenBatcher> train_batches, valid_batches;
  std::unique_ptr<BatchStream> batches;  // this rank's share of train_batches
  model::Transformer model{nullptr};
  std::unique_ptr<optim::FusedAdam> adam;
  runtime::LossScaler scaler{false};
  checkpoint::TrainingState state;
  std::unique_ptr<CheckpointPolicy> checkpoints;  // when step checkpoints are due
  std::unique_ptr<SkippedUpdates> skipped;        // updates with non-finite gradients
  Clock::time_point run_start = Clock::now();
  double elapsed_before = 0.0;  // training seconds of earlier processes (from the checkpoint)

  std::string run_uid;     // written into checkpoints, checked on resume
  std::string unrecorded;  // why rank 0's sink cannot record; the run stops at the next update
  std::function<StopReason()> stop_source;         // polled once per update
  std::function<void(const RunConfig&)> on_start;  // with the resolved config, before step one
  Trainer::GradientHook after_backward;            // tests: fault injection
  runtime::LauncherVariables launcher;             // for the choice of this rank's GPU

  void setup(const std::string& resume_from);
  bool time_budget_spent() const;
  double done_fraction() const;
  void setup_data_parallel();
  UpdateStats update();
  double gradient_norm() const;
  std::pair<double, double> read_losses(const UpdateStats& u) const;
  SplitScore validate();
  double validation_bleu();
  std::unique_ptr<preprocess::Vocabulary> vocab;  // loaded for validation BLEU only
  void after_update(const UpdateStats& u, double step_seconds, ProgressMeter& progress,
                    TrainResult& result);
  LogWindow window;  // the updates since the last log step
  void log_update(const UpdateStats& u, LogWindow& w, TrainResult& result);
  bool validate_and_keep_best(TrainResult& result);
  void log_validation_bleu();
  bool maybe_checkpoint(const UpdateStats& u, const TrainResult& result);
  void save(const std::string& path);
  void log_rank_throughput(const LogWindow& w);
};

// `resume_from`: the checkpoint a resumed run continues from ("" for a fresh run).
void Trainer::Impl::setup(const std::string& resume_from) {
  const auto& t = config.train;
  device = choose_device(t, comm, launcher);
  if (device.is_cpu()) runtime::configure_cpu_threads(t.threads);
  std::optional<RunConfig> stored;  // the config the resumed checkpoint was trained with
  if (!resume_from.empty()) stored = checkpoint::read_checkpoint_config(resume_from);
  const RunConfig* resumed = stored ? &*stored : nullptr;
  precision = choose_precision(config, resumed, device, comm);
  if (device.is_cuda()) runtime::configure_cuda_matmuls(precision);
  scaler = runtime::LossScaler(precision == runtime::Precision::kFp16);
  choose_update_batches(config, resumed, comm);
  preprocess::DatasetOptions data_options;
  data_options.verify_checksums = config.data.verify_checksums;
  train_data =
      preprocess::ShardDataset::open(config.data.dir, config.data.train_split, data_options);
  train_batches = std::make_unique<data::TokenBatcher>(train_data, config.data, t.seed);
  batches = std::make_unique<BatchStream>(*train_batches, comm.rank(), comm.size(),
                                          t.update_batches, device);
  if (!config.data.valid_split.empty()) {
    preprocess::DatasetOptions same_vocab = data_options;
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
  optim::AdamSettings adam_settings;
  adam_settings.beta1 = t.adam_beta1;
  adam_settings.beta2 = t.adam_beta2;
  adam_settings.eps = t.adam_eps;
  adam = std::make_unique<optim::FusedAdam>(model->parameters(), adam_settings);
  if (comm.is_root()) {
    spdlog::info("Adam: {}", adam->fused() ? "one fused kernel for all parameters"
                                           : "LibTorch's per-parameter step");
  }
  checkpoints = std::make_unique<CheckpointPolicy>(config.checkpoint, t.max_steps);
  skipped = std::make_unique<SkippedUpdates>(t.max_skipped_updates);
  state.vocab_sha256 = train_data.manifest().vocab_sha256;
  state.vocab_model = vocabulary_to_embed(config.data.dir, train_data.manifest());
}

// One update. Nothing in it reads a value back from the device but one finite check (the fp16
// scaler's, else the gradient norm): the losses stay on the device until a log step reads them
// (read_losses), token counts come from the host batches, clipping and Adam run as device
// kernels. An update with non-finite gradients is skipped (SkippedUpdates). The gradients were
// all-reduced, so every rank reads the same norm and takes the same decision.
UpdateStats Trainer::Impl::update() {
  const auto& t = config.train;
  UpdateStats u;
  comm.set_step(state.step + 1);
  adam->zero_grad();
  for (std::int64_t a = 0; a < t.accumulation; ++a) {
    const auto batch = batches->next();
    runtime::seed_generator(
        device, micro_batch_seed(t.seed, state.step + 1, batches->last_index_in_update()));
    optim::LossTerms terms;
    {
      runtime::AutocastScope autocast(precision, device);
      const auto logits = model->forward(batch.src, batch.tgt_in);  // [batch, tgt_len, vocab]
      terms = optim::label_smoothed_loss(logits.reshape({-1, logits.size(-1)}),
                                         batch.tgt_out.reshape({-1}), t.label_smoothing,
                                         preprocess::kPadId);
    }
    if (reducer && a + 1 == t.accumulation) reducer->arm();
    (terms.smoothed * scaler.scale()).backward();
    batches->prefetch();  // the GPU is busy with the backward pass: build the next batch meanwhile
    const auto loss = terms.smoothed.detach();  // [] fp32
    u.loss_sum = a == 0 ? loss : u.loss_sum + loss;
    u.nll_sum = a == 0 ? terms.nll : u.nll_sum + terms.nll;
    u.tgt_tokens += batch.tgt_tokens;
    u.src_tokens += batch.src_tokens;
  }
  u.local_tokens = u.src_tokens + u.tgt_tokens;
  u.stop = stop_source ? stop_source() : StopReason::kNone;
  if (!unrecorded.empty()) u.stop = StopReason::kUnrecorded;  // rank 0's sink failed
  // Rank 0's clock decides the time budget; the ranks agree through the all-reduce below.
  u.out_of_time = comm.is_root() && time_budget_spent();
  // The run's fraction behind this update (the cool-down's); by time, rank 0's (agreed below).
  double done = done_fraction();
  if (reducer) {
    comm.take_wait_seconds();
    reducer->finish();
    u.allreduce_seconds = comm.take_wait_seconds();
    const bool by_time = comm.is_root() && checkpoints->time_is_up();
    std::vector<double> sums = {static_cast<double>(u.tgt_tokens),
                                static_cast<double>(u.src_tokens),
                                by_time ? 1.0 : 0.0,
                                u.stop == StopReason::kPreempted ? 1.0 : 0.0,
                                u.stop == StopReason::kInterrupted ? 1.0 : 0.0,
                                u.out_of_time ? 1.0 : 0.0,
                                comm.is_root() ? done : 0.0,
                                u.stop == StopReason::kUnrecorded ? 1.0 : 0.0};
    comm.allreduce_sum(sums);
    done = sums[6];
    u.tgt_tokens = static_cast<std::int64_t>(sums[0]);
    u.src_tokens = static_cast<std::int64_t>(sums[1]);
    u.checkpoint_by_time = sums[2] > 0;
    u.stop = agreed_stop(sums[3], sums[4], sums[7]);
    u.out_of_time = sums[5] > 0;
  }
  // Token-averaged gradients: the update's loss is the mean over all its target tokens (of all
  // ranks: the reducer left the sum over ranks in .grad). The division shares the scaler's pass.
  const auto parameters = model->parameters();
  if (after_backward) after_backward(state.step + 1, parameters);
  const bool high_scale = scaler.enabled() && scaler.scale() > 1.0;  // fp16 overflow is routine
  bool finite =
      scaler.unscale(parameters, static_cast<double>(std::max<std::int64_t>(u.tgt_tokens, 1)));
  if (!scaler.enabled()) {
    u.grad_norm = gradient_norm();
    finite = std::isfinite(u.grad_norm);
  }
  const bool apply = skipped->admit(state.step + 1, finite, u.grad_norm, !high_scale);
  if (apply && t.clip_norm > 0) optim::clip_gradient_norm(parameters, t.clip_norm);
  u.lr =
      optim::noam_learning_rate(state.step + 1, config.model.d_model, t.warmup_steps, t.lr_factor) *
      optim::cooldown_factor(done, t.cooldown);
  if (apply) adam->step(u.lr);
  scaler.update(finite);
  ++state.step;
  const auto position = batches->position();
  state.epoch = position.epoch;
  state.batch_in_epoch = position.batch_in_epoch;
  return u;
}

// The update's mean losses per target token, summed over ranks: a read from the device and, with
// several ranks, a collective, so only on log steps (every rank calls it on the same steps).
std::pair<double, double> Trainer::Impl::read_losses(const UpdateStats& u) const {
  std::vector<double> sums = {u.loss_sum.item<double>(), u.nll_sum.item<double>()};
  if (comm.size() > 1) comm.allreduce_sum(sums);
  const double tokens = static_cast<double>(std::max<std::int64_t>(u.tgt_tokens, 1));
  return {sums[0] / tokens, sums[1] / tokens};
}

double Trainer::Impl::gradient_norm() const {
  const auto norm = optim::gradient_norm(model->parameters());
  return norm.defined() ? norm.item<double>() : 0.0;
}

SplitScore Trainer::Impl::validate() {
  if (!valid_batches) return {};
  return score_split(model, *valid_batches, config.train.label_smoothing, precision, device, comm);
}

double Trainer::Impl::validation_bleu() {
  const auto& t = config.train;
  if (!vocab) {
    vocab = std::make_unique<preprocess::Vocabulary>(preprocess::Vocabulary::load(
        (fs::path(config.data.dir) / preprocess::kVocabularyFile).string()));
  }
  BleuSettings settings;
  settings.beam = t.valid_bleu_beam;
  settings.alpha = config.decode.alpha;
  settings.sentences = t.valid_bleu_sentences;
  settings.precision = precision;
  return split_bleu(model, valid_data, *vocab, device, settings);
}

// How much of the run is done, for the progress line: of its updates, or of its time budget when
// that ends it sooner (the ETA is then the budget's).
double Trainer::Impl::done_fraction() const {
  const auto& t = config.train;
  const double steps = static_cast<double>(state.step) / static_cast<double>(t.max_steps);
  if (t.max_minutes <= 0) return steps;
  const double time = (elapsed_before + seconds_since(run_start)) / (t.max_minutes * 60.0);
  return std::min(1.0, std::max(steps, time));
}

// train.max_minutes: this run's training time, earlier processes' included, against the budget.
bool Trainer::Impl::time_budget_spent() const {
  const double budget = config.train.max_minutes;
  return budget > 0 && elapsed_before + seconds_since(run_start) >= budget * 60.0;
}

// Rank 0 writes; the replicas are identical. The metrics of the checkpoint's step are written
// out first: a resume from it logs only later steps, so nothing of its step may still wait.
void Trainer::Impl::save(const std::string& path) {
  if (!comm.is_root()) return;
  sink->flush();
  fs::create_directories(fs::path(path).parent_path());
  state.elapsed_seconds = elapsed_before + seconds_since(run_start);
  checkpoint::save_checkpoint(path, *model, &adam->state(), state, config);
  checkpoints->saved();
}

// Every rank reports its own throughput and all-reduce wait through rank 0, so a straggler shows
// in the tracker as one rank's low tokens/s and the others' long waits.
void Trainer::Impl::log_rank_throughput(const LogWindow& w) {
  const auto tok_s = comm.gather(static_cast<double>(w.local_tokens) / w.seconds);
  const auto waits = comm.gather(w.allreduce_seconds / w.seconds);
  if (!comm.is_root()) return;
  for (int r = 0; r < comm.size(); ++r) {
    sink->log(fmt::format("train/rank{}/tokens_per_s", r), state.step, tok_s[r]);
    sink->log(fmt::format("train/rank{}/allreduce_fraction", r), state.step, waits[r]);
  }
}

// The train/* metrics and the progress line of the updates since the last log step (rank 0
// writes; every rank joins the collectives behind the losses, the gradient norm and the per-rank
// throughput). The loss read waits for the device's queued work, so the window's time, the
// updates' own time plus that wait, is what the device took.
void Trainer::Impl::log_update(const UpdateStats& u, LogWindow& w, TrainResult& result) {
  const std::int64_t step = state.step;
  const auto read_start = Clock::now();
  const auto [loss, nll] = read_losses(u);
  const double grad_norm = std::isnan(u.grad_norm) ? gradient_norm() : u.grad_norm;
  w.seconds = std::max(w.seconds + seconds_since(read_start), 1e-9);
  result.last_train_loss = loss;
  if (comm.size() > 1) log_rank_throughput(w);
  const double tok_s = static_cast<double>(w.tokens) / w.seconds;
  const double ms_per_step =
      1000.0 * w.seconds / static_cast<double>(std::max<std::int64_t>(w.steps, 1));
  if (!comm.is_root()) return;
  sink->log("train/loss", step, loss);
  sink->log("train/nll", step, nll);
  sink->log("train/ppl", step, std::exp(nll));
  sink->log("train/lr", step, u.lr);
  sink->log("train/grad_norm", step, grad_norm);
  sink->log("train/skipped_updates", step, static_cast<double>(skipped->total()));
  sink->log("train/tokens_per_s", step, tok_s);
  sink->log("train/ms_per_step", step, ms_per_step);
  std::string memory;
  if (device.is_cuda()) {
    const double peak_gib =
        static_cast<double>(runtime::cuda_peak_memory_bytes(device.index())) / (1 << 30);
    sink->log("gpu/peak_memory_gib", step, peak_gib);
    memory = fmt::format(", peak {:.2f} GiB on {}", peak_gib, device.str());
  }
  spdlog::info("step {}: loss {:.3f}, ppl {:.2f}, lr {:.3g}, {:.0f} tokens/s, {:.0f} ms/step{}{}",
               step, loss, std::exp(nll), u.lr, tok_s, ms_per_step, memory,
               comm.size() > 1 ? fmt::format(" ({} ranks, {:.0f}% waiting on all-reduce)",
                                             comm.size(), 100.0 * w.allreduce_seconds / w.seconds)
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
  ValidationRecord record{state.best_valid_nll, state.validations_without_improvement};
  const bool best = record_validation(record, v.nll);
  state.best_valid_nll = record.best_nll;
  state.validations_without_improvement = record.without_improvement;
  if (best) save((fs::path(run_dir) / "checkpoints" / "best.h5").string());
  result.early_stopped = should_stop_early(record, t.early_stopping);
  return best;
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

// A periodic checkpoint by steps or minutes, and always the last one (the last step, early
// stopping, a stop signal). Returns whether one was saved.
bool Trainer::Impl::maybe_checkpoint(const UpdateStats& u, const TrainResult& result) {
  const std::int64_t step = state.step;
  const bool by_time = comm.size() > 1 ? u.checkpoint_by_time : checkpoints->time_is_up();
  const bool ending = result.early_stopped || u.out_of_time || u.stop != StopReason::kNone;
  if (!checkpoints->due(step, by_time, ending)) return false;
  save(checkpoint::checkpoint_path(run_dir, step));
  if (comm.is_root()) checkpoint::prune_checkpoints(run_dir, config.checkpoint.keep_last);
  checkpoints->saved();
  return true;
}

void Trainer::Impl::after_update(const UpdateStats& u, double step_seconds, ProgressMeter& progress,
                                 TrainResult& result) {
  const auto& t = config.train;
  const std::int64_t step = state.step;
  const bool last = step == t.max_steps || u.out_of_time;
  const auto due = [&](std::int64_t every) { return every > 0 && (step % every == 0 || last); };
  allreduce_seconds += u.allreduce_seconds;
  step_seconds_total += step_seconds;
  window.add(u, step_seconds);
  // The last update is always logged, also when a stop signal makes it the last of this process.
  if (step % t.log_every == 0 || last || u.stop != StopReason::kNone) {
    log_update(u, window, result);
    window = LogWindow();
  }
  if (comm.is_root()) {
    progress.update(step, done_fraction());
  }
  // Validation perplexity runs on a stop step too: it feeds the best checkpoint and early
  // stopping, which a resumed run must continue exactly. BLEU (a metric only, and slow) does not.
  const bool stopping = u.stop != StopReason::kNone;
  bool root_worked = false;  // rank 0 wrote or decoded alone; the others wait for it below
  if (valid_batches && due(t.validate_every)) root_worked |= validate_and_keep_best(result);
  if (valid_batches && due(t.valid_bleu_every) && !stopping) {
    log_validation_bleu();
    root_worked = true;
  }
  root_worked |= maybe_checkpoint(u, result);
  if (root_worked && comm.size() > 1) {
    dist::Communicator::LongWait patient(comm);
    comm.barrier();
  }
  sink->flush();
  if (comm.is_root() && unrecorded.empty()) {
    unrecorded = sink->failure();
    if (!unrecorded.empty() && step < t.max_steps && u.stop == StopReason::kNone) {
      spdlog::error("step {}: {}; stopping with a checkpoint after the next update", step,
                    unrecorded);
    }
  }
  if (u.out_of_time && step < t.max_steps) {
    result.out_of_time = true;
    if (comm.is_root()) {
      spdlog::info("train.max_minutes {} reached after step {} of {}: the run ends here",
                   t.max_minutes, step, t.max_steps);
    }
  }
  // A stop that came with the last update (or an early stop) changes nothing: the run finished.
  if (stopping && step < t.max_steps && !result.early_stopped && !result.out_of_time) {
    result.stopped = u.stop;
    if (comm.is_root() && u.stop == StopReason::kUnrecorded) {
      spdlog::error(
          "stopped after step {} with a checkpoint, since the metrics cannot be recorded; once "
          "that is fixed, --resume continues",
          step);
    } else if (comm.is_root()) {
      spdlog::warn("stop signal ({}): stopped after step {} with a checkpoint; --resume continues",
                   stop_reason_name(u.stop), step);
    }
  }
}

// The ranks become one data-parallel job: hang detection on, rank 0's parameters everywhere
// (checked), and the gradient reducer. (Dropout needs nothing per rank: each micro-batch seeds it
// from its place in the update.)
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
  dist::ReducerOptions options;
  options.bucket_mb = d.bucket_mb;
  options.overlap = d.overlap;
  // CUDA: NCCL when this LibTorch has it (auto) or when asked for; else CUDA-aware MPI when the
  // MPI library says it is (auto) or when asked for (mpi); else host staging.
  const bool cuda = device.is_cuda();
  if (d.backend == DistBackend::kNccl ||
      (cuda && d.backend == DistBackend::kAuto && dist::nccl_available())) {
    if (!cuda) throw std::runtime_error("dist.backend nccl needs a CUDA device (train.device)");
    device_collective = dist::make_nccl_collective(comm, d.hang_timeout_s);
    options.device_collective = device_collective.get();
  }
  options.device_buffers =
      cuda && (d.backend == DistBackend::kMpi ||
               (d.backend == DistBackend::kAuto && dist::Communicator::cuda_aware()));
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

void Trainer::set_stop_source(std::function<StopReason()> poll) {
  impl_->stop_source = std::move(poll);
}

void Trainer::set_after_backward(GradientHook hook) {
  impl_->after_backward = std::move(hook);
}

void Trainer::set_on_start(std::function<void(const RunConfig&)> on_start) {
  impl_->on_start = std::move(on_start);
}

void Trainer::set_run_uid(std::string uid) {
  impl_->run_uid = std::move(uid);
  impl_->state.run_uid = impl_->run_uid;
}

void Trainer::set_launcher(runtime::LauncherVariables launcher) {
  impl_->launcher = std::move(launcher);
}

TrainResult Trainer::run(bool resume) {
  auto& m = *impl_;
  checkpoint::refuse_fresh_start_over_checkpoints(m.run_dir, resume);
  const auto existing = checkpoint::list_checkpoints(m.run_dir);
  m.setup(resume && !existing.empty() ? existing.back() : std::string());
  if (resume && !existing.empty()) {
    const std::string vocab_sha256 = m.state.vocab_sha256;  // the shards'
    std::string vocab_model = std::move(m.state.vocab_model);
    m.state = checkpoint::load_checkpoint(existing.back(), *m.model, &m.adam->state(), m.config);
    checkpoint::check_vocabulary(existing.back(), m.state, vocab_sha256,
                                 m.config.data.dir + " (manifest)");
    if (!m.run_uid.empty() && !m.state.run_uid.empty() && m.state.run_uid != m.run_uid) {
      throw std::runtime_error(fmt::format(
          "{} was written by the run of uid {}, but {} is the run of uid {} (its run.json): the "
          "directory mixes two runs; move the checkpoint out or start a new run directory",
          existing.back(), m.state.run_uid, m.run_dir, m.run_uid));
    }
    m.state.vocab_sha256 = vocab_sha256;
    m.state.vocab_model = std::move(vocab_model);  // also into checkpoints of older files' runs
    if (!m.run_uid.empty()) m.state.run_uid = m.run_uid;
    m.batches->seek({m.state.epoch, m.state.batch_in_epoch});
    if (m.comm.is_root()) {
      spdlog::info("resumed from {} at step {} (epoch {}, batch {})", existing.back(), m.state.step,
                   m.state.epoch, m.state.batch_in_epoch);
    }
  }
  m.setup_data_parallel();
  if (m.comm.is_root()) {
    fs::create_directories(m.run_dir);
    write_file_atomically((fs::path(m.run_dir) / "config.yaml").string(), to_yaml(m.config));
  }
  if (m.on_start) m.on_start(m.config);
  TrainResult result;
  for (const auto& p : m.model->parameters()) result.parameters += p.numel();
  spdlog::info("model: {} parameters on {} (malloc: {})", result.parameters,
               runtime::describe_device(m.device), runtime::malloc_implementation());
  m.model->train();
  const auto& t = m.config.train;
  const std::int64_t first_step = m.state.step;
  if (first_step >= t.max_steps && m.comm.is_root()) {
    spdlog::info("the run already reached train.max_steps {}: nothing to train", t.max_steps);
  }
  const auto start = Clock::now();
  m.run_start = start;
  m.elapsed_before = m.state.elapsed_seconds;
  ProgressMeter progress("train", "steps", 30.0);
  // Rate and ETA from this process's steps and time: a resumed run starts part-way.
  progress.start_at(first_step, m.done_fraction());
  // A resumed run whose budget was spent before is finished (the checkpoint's figure: every rank
  // agrees).
  if (t.max_minutes > 0 && m.elapsed_before >= t.max_minutes * 60.0) {
    result.out_of_time = true;
    if (m.comm.is_root()) {
      spdlog::info("the run already spent train.max_minutes {}: nothing to train", t.max_minutes);
    }
  }
  while (m.state.step < t.max_steps && !result.early_stopped && !result.out_of_time &&
         result.stopped == StopReason::kNone) {
    const auto step_start = Clock::now();
    const auto u = m.update();
    m.after_update(u, seconds_since(step_start), progress, result);
  }
  result.seconds = seconds_since(start);
  result.allreduce_fraction =
      m.step_seconds_total > 0 ? m.allreduce_seconds / m.step_seconds_total : 0.0;
  result.steps = m.state.step;
  result.steps_this_process = m.state.step - first_step;
  result.skipped_updates = m.skipped->total();
  result.best_valid_nll = m.state.best_valid_nll;
  if (m.comm.is_root() && result.steps_this_process > 0) progress.finish(m.state.step);
  return result;
}

}  // namespace nmt::train
