#include "trainer/train/trainer.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <torch/utils.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "common/atomic_file.h"
#include "common/progress.h"
#include "common/run_layout.h"
#include "preprocess/vocabulary.h"
#include "trainer/model/transformer.h"
#include "trainer/optim/fused_adam.h"
#include "trainer/runtime/allocator.h"
#include "trainer/runtime/blas_backend.h"
#include "trainer/runtime/device.h"
#include "trainer/runtime/precision.h"
#include "trainer/runtime/run_environment.h"
#include "trainer/train/batch_stream.h"
#include "trainer/train/data_parallel.h"
#include "trainer/train/evaluation.h"
#include "trainer/train/resume.h"
#include "trainer/train/run_choices.h"
#include "trainer/train/schedule.h"
#include "trainer/train/training_data.h"
#include "trainer/train/update_agreement.h"
#include "trainer/train/update_log.h"
#include "trainer/train/updater.h"

namespace nmt::train {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

struct Trainer::Impl {
  RunConfig config;
  std::string run_dir;
  std::shared_ptr<MetricsSink> sink;
  distributed::Communicator comm = distributed::Communicator::self();
  DataParallel parallel;  // the link to the other ranks (none with one rank)
  double allreduce_seconds = 0.0, step_seconds_total = 0.0;
  c10::Device device{c10::kCPU};
  runtime::Precision precision = runtime::Precision::kFp32;  // resolved: never auto
  std::string precision_reason;                              // why that one
  std::unique_ptr<TrainingData> data;
  std::unique_ptr<BatchStream> batches;  // this rank's share of data->train_batches
  model::Transformer model{nullptr};
  std::unique_ptr<optim::FusedAdam> adam;
  std::unique_ptr<Updater> updater;  // once the ranks are joined
  checkpoint::TrainingState state;
  std::unique_ptr<Schedule> schedule;             // when to log, validate, save and stop
  std::unique_ptr<preprocess::Vocabulary> vocab;  // loaded for validation BLEU only
  LogWindow window;                               // the updates since the last log step
  LossWindow losses;                              // their losses (skipped updates left out)

  std::string unrecorded;  // why rank 0's sink cannot record; the run stops at the next update
  std::function<StopReason()> stop_source;  // polled once per update
  std::vector<std::shared_ptr<TrainingObserver>> observers;
  Trainer::GradientHook after_backward;  // tests: fault injection
  runtime::LauncherVariables launcher;   // for the choice of this rank's GPU

  template <class Train>
  TrainResult observed(Train&& train);
  TrainResult run(const Resume& resumed);
  void setup(const RunConfig* resumed);
  UpdateStats update();
  void after_update(const UpdateStats& u, double step_seconds, ProgressMeter& progress,
                    TrainResult& result);
  void log_update(const UpdateStats& u, TrainResult& result);
  bool validate_and_keep_best();
  void log_validation_bleu();
  void save_step_checkpoint();
  void save(const std::string& path);
  void watch_sink(std::int64_t step, const UpdateAgreement& votes);
  void report_ending(std::int64_t step, const Ending& ending) const;
};

// `resumed`: the config of the checkpoint a resumed run continues (nullptr for a fresh run).
void Trainer::Impl::setup(const RunConfig* resumed) {
  const auto& t = config.train;
  device = choose_device(t, comm, launcher);
  if (device.is_cpu()) runtime::configure_cpu_threads(t.threads);
  const auto choice = choose_precision(config, resumed, device, comm);
  precision = choice.precision;
  precision_reason = choice.reason;
  if (device.is_cuda()) runtime::configure_cuda_matmuls(precision);
  choose_update_batches(config, resumed, comm);
  data = std::make_unique<TrainingData>(config);
  batches = std::make_unique<BatchStream>(*data->train_batches, comm.rank(), comm.size(),
                                          t.update_batches, device);
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
  schedule =
      std::make_unique<Schedule>(t, config.checkpoint, data->valid_batches != nullptr, comm.size());
  state.vocab_sha256 = data->train.manifest().vocab_sha256;
  state.vocab_model = data->vocabulary_to_embed();
}

// One update (updater.h). The votes travel in one collective after the gradients' all-reduce,
// so every rank decides alike.
UpdateStats Trainer::Impl::update() {
  UpdateStats u;
  comm.set_step(state.step + 1);
  updater->accumulate(state.step + 1, u);
  auto& votes = u.votes;
  votes.vote_stop(stop_source ? stop_source() : StopReason::kNone);
  if (!unrecorded.empty()) votes.vote_stop(StopReason::kUnrecorded);  // rank 0's sink failed
  // Rank 0's clock decides the time budget and the run's fraction behind this update (the
  // cool-down's); the ranks agree on them below.
  votes.out_of_time = comm.is_root() && schedule->out_of_time();
  votes.done_fraction = schedule->done_fraction(state.step);
  if (parallel.reducer) {
    comm.take_wait_seconds();
    parallel.reducer->finish();
    u.allreduce_seconds = comm.take_wait_seconds();
    votes.checkpoint_by_time = comm.is_root() && schedule->checkpoint_time_is_up();
    votes = agree(votes, comm);
  }
  updater->apply(state.step + 1, u);
  ++state.step;
  const auto position = batches->position();
  state.epoch = position.epoch;
  state.batch_in_epoch = position.batch_in_epoch;
  return u;
}

// The window's mean losses per target token over all ranks (a read from the device and, with
// several ranks, a collective: every rank calls it on the same steps), with the rest of the log
// step's update's figures. The loss read waits for the device's queued work, so the window's time,
// the updates' own time plus that wait, is what the device took.
void Trainer::Impl::log_update(const UpdateStats& u, TrainResult& result) {
  const auto read_start = Clock::now();
  const auto totals = losses.totals(comm);
  const double tokens = static_cast<double>(std::max<std::int64_t>(totals.tgt_tokens, 1));
  UpdateFigures figures;
  figures.step = state.step;
  figures.window_updates = totals.updates;
  figures.window_tgt_tokens = totals.tgt_tokens;
  if (state.tgt_tokens >= 0) state.tgt_tokens += totals.tgt_tokens;
  figures.tgt_tokens = state.tgt_tokens;
  figures.loss = totals.updates > 0 ? totals.loss_sum / tokens : std::nan("");
  figures.nll = totals.updates > 0 ? totals.nll_sum / tokens : std::nan("");
  figures.lr = u.lr;
  figures.grad_norm = std::isnan(u.grad_norm) ? updater->gradient_norm() : u.grad_norm;
  figures.skipped_updates = updater->skipped_total();
  window.seconds = std::max(window.seconds + seconds_since(read_start), 1e-9);
  if (totals.updates > 0) result.last_train_loss = figures.loss;
  log_updates(*sink, comm, device, figures, window);
}

// Validation perplexity (every rank, a collective), the best checkpoint and early stopping.
// Returns whether rank 0 wrote a checkpoint the others must wait for.
bool Trainer::Impl::validate_and_keep_best() {
  const std::int64_t step = state.step;
  const auto v = score_split(model, *data->valid_batches, config.train.label_smoothing, precision,
                             device, comm);
  sink->log("valid/nll", step, v.nll);
  sink->log("valid/loss", step, v.loss);
  sink->log("valid/ppl", step, v.ppl);
  if (comm.is_root()) {
    spdlog::info("step {}: validation nll {:.4f}, perplexity {:.2f} ({} tokens)", step, v.nll,
                 v.ppl, v.tokens);
  }
  ValidationRecord record{state.best_valid_nll, state.validations_without_improvement};
  const bool best = schedule->record_validation(record, v.nll);
  state.best_valid_nll = record.best_nll;
  state.validations_without_improvement = record.without_improvement;
  if (best) save(run_layout::best_checkpoint_path(run_dir));
  return best;
}

// Rank 0 decodes the validation set alone (beam search is not data parallel).
void Trainer::Impl::log_validation_bleu() {
  if (!comm.is_root()) return;
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
  const double bleu = split_bleu(model, data->valid, *vocab, device, settings);
  sink->log("valid/bleu", state.step, bleu);
  spdlog::info("step {}: validation BLEU {:.2f} ({})", state.step, bleu,
               t.valid_bleu_beam == 1 ? "greedy" : fmt::format("beam {}", t.valid_bleu_beam));
}

void Trainer::Impl::save_step_checkpoint() {
  save(run_layout::checkpoint_path(run_dir, state.step));
  if (comm.is_root()) checkpoint::prune_checkpoints(run_dir, config.checkpoint.keep_last);
  schedule->saved();
}

// Rank 0 writes; the replicas are identical. The metrics of the checkpoint's step are written
// out first: a resume from it logs only later steps, so nothing of its step may still wait. The
// open log window's sums (every rank: a collective) go with it, so that the first log step after
// a resume averages the same updates as an uninterrupted run.
void Trainer::Impl::save(const std::string& path) {
  const auto open = losses.totals(comm);
  if (!comm.is_root()) return;
  state.window_updates = open.updates;
  state.window_tgt_tokens = open.tgt_tokens;
  state.window_loss_sum = open.loss_sum;
  state.window_nll_sum = open.nll_sum;
  sink->flush();
  fs::create_directories(fs::path(path).parent_path());
  state.elapsed_seconds = schedule->elapsed_seconds();
  checkpoint::save_checkpoint(path, *model, &adam->state(), state, config);
  schedule->saved();
  for (const auto& observer : observers) observer->on_checkpoint(path, state.step);
}

// Rank 0 notices a sink that cannot record; its vote stops the run after the next update.
void Trainer::Impl::watch_sink(std::int64_t step, const UpdateAgreement& votes) {
  if (!comm.is_root() || !unrecorded.empty()) return;
  unrecorded = sink->failure();
  if (!unrecorded.empty() && step < config.train.max_steps && votes.stop() == StopReason::kNone) {
    spdlog::error("step {}: {}; stopping with a checkpoint after the next update", step,
                  unrecorded);
  }
}

void Trainer::Impl::report_ending(std::int64_t step, const Ending& ending) const {
  if (!comm.is_root()) return;
  const auto& t = config.train;
  if (ending.out_of_time) {
    spdlog::info("train.max_minutes {} reached after step {} of {}: the run ends here",
                 t.max_minutes, step, t.max_steps);
  } else if (ending.stopped == StopReason::kUnrecorded) {
    spdlog::error(
        "stopped after step {} with a checkpoint, since the metrics cannot be recorded; once "
        "that is fixed, --resume continues",
        step);
  } else if (ending.stopped != StopReason::kNone) {
    spdlog::warn("stop signal ({}): stopped after step {} with a checkpoint; --resume continues",
                 stop_reason_name(ending.stopped), step);
  }
}

// What the schedule asks for after the update: the log, validation, BLEU, a checkpoint, the end.
void Trainer::Impl::after_update(const UpdateStats& u, double step_seconds, ProgressMeter& progress,
                                 TrainResult& result) {
  const std::int64_t step = state.step;
  const auto& votes = u.votes;
  allreduce_seconds += u.allreduce_seconds;
  step_seconds_total += step_seconds;
  window.add(votes.src_tokens + votes.tgt_tokens, u.local_tokens, step_seconds,
             u.allreduce_seconds);
  if (u.applied) losses.add(u.loss_sum, u.nll_sum, votes.tgt_tokens);
  if (schedule->log(step, votes)) {
    log_update(u, result);
    window = LogWindow();
    losses.clear();
  }
  if (comm.is_root()) progress.update(step, schedule->done_fraction(step));
  bool root_worked = false;  // rank 0 wrote or decoded alone; the others wait for it below
  if (schedule->validate(step, votes)) root_worked |= validate_and_keep_best();
  if (schedule->validate_bleu(step, votes)) {
    log_validation_bleu();
    root_worked = true;
  }
  if (schedule->checkpoint(step, votes)) {
    save_step_checkpoint();
    root_worked = true;
  }
  if (root_worked && comm.size() > 1) {
    distributed::Communicator::LongWait patient(comm);
    comm.barrier();
  }
  sink->flush();
  watch_sink(step, votes);
  report_ending(step, schedule->conclude(step, votes));
}

Trainer::Trainer(RunConfig config, std::string run_dir, std::shared_ptr<MetricsSink> sink,
                 distributed::Communicator comm)
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

void Trainer::add_observer(std::shared_ptr<TrainingObserver> observer) {
  impl_->observers.push_back(std::move(observer));
}

void Trainer::set_run_uid(std::string uid) {
  impl_->state.run_uid = std::move(uid);
}

void Trainer::set_launcher(runtime::LauncherVariables launcher) {
  impl_->launcher = std::move(launcher);
}

// The observers hear the end, or the failure before it leaves run().
template <class Train>
TrainResult Trainer::Impl::observed(Train&& train) {
  TrainResult result;
  try {
    result = train();
  } catch (const std::exception& e) {
    for (const auto& observer : observers) observer->on_failure(e.what());
    throw;
  }
  for (const auto& observer : observers) observer->on_end(result);
  return result;
}

TrainResult Trainer::run(bool resume) {
  return impl_->observed([&] { return impl_->run(Resume(impl_->run_dir, resume)); });
}

TrainResult Trainer::run(const Resume& resume) {
  if (resume.run_dir() != impl_->run_dir) {
    throw std::invalid_argument(
        fmt::format("a resume of {} given to the trainer of {}", resume.run_dir(), impl_->run_dir));
  }
  return impl_->observed([&] { return impl_->run(resume); });
}

TrainResult Trainer::Impl::run(const Resume& resumed) {
  auto& m = *this;
  m.setup(resumed.stored_config());
  resumed.restore(*m.model, m.adam->state(), m.config, m.state, *m.batches, m.comm);
  m.losses.restore({m.state.window_updates, m.state.window_tgt_tokens, m.state.window_loss_sum,
                    m.state.window_nll_sum},
                   m.comm, m.device);
  m.parallel = join_data_parallel(*m.model, m.config.dist, m.device, m.comm);
  m.updater =
      std::make_unique<Updater>(m.config, m.model, *m.adam, *m.batches, m.parallel.reducer.get(),
                                m.device, m.precision, m.after_backward);
  if (m.comm.is_root()) {
    fs::create_directories(m.run_dir);
    write_file_atomically(run_layout::config_path(m.run_dir), to_yaml(m.config));
  }
  if (!m.observers.empty()) {
    const RunStart start{m.config, m.precision_reason, runtime::environment_provenance(m.device)};
    for (const auto& observer : m.observers) observer->on_start(start);
  }
  TrainResult result;
  result.parameters = m.model->parameter_count();
  spdlog::info("model: {} parameters on {} (malloc: {})", result.parameters,
               runtime::describe_device(m.device), runtime::malloc_implementation());
  m.model->train();
  const auto& t = m.config.train;
  const std::int64_t first_step = m.state.step;
  if (first_step >= t.max_steps && m.comm.is_root()) {
    spdlog::info("the run already reached train.max_steps {}: nothing to train", t.max_steps);
  }
  const auto start = Clock::now();
  m.schedule->start(m.state.elapsed_seconds, start);
  ProgressMeter progress("train", "steps", 30.0);
  // Rate and ETA from this process's steps and time: a resumed run starts part-way.
  progress.start_at(first_step, m.schedule->done_fraction(first_step));
  // A resumed run whose budget was spent before is finished (the checkpoint's figure: every rank
  // agrees).
  if (m.schedule->ending().out_of_time && m.comm.is_root()) {
    spdlog::info("the run already spent train.max_minutes {}: nothing to train", t.max_minutes);
  }
  while (m.schedule->running(m.state.step)) {
    const auto step_start = Clock::now();
    const auto u = m.update();
    m.after_update(u, seconds_since(step_start), progress, result);
  }
  const Ending& ending = m.schedule->ending();
  result.early_stopped = ending.early_stopped;
  result.out_of_time = ending.out_of_time;
  result.stopped = ending.stopped;
  result.seconds = seconds_since(start);
  result.allreduce_fraction =
      m.step_seconds_total > 0 ? m.allreduce_seconds / m.step_seconds_total : 0.0;
  result.steps = m.state.step;
  result.steps_this_process = m.state.step - first_step;
  result.skipped_updates = m.updater->skipped_total();
  result.best_valid_nll = m.state.best_valid_nll;
  if (m.comm.is_root() && result.steps_this_process > 0) progress.finish(m.state.step);
  return result;
}

}  // namespace nmt::train
