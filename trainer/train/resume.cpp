#include "trainer/train/resume.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <stdexcept>
#include <utility>

namespace nmt::train {

Resume::Resume(std::string run_dir, bool resume) : run_dir_(std::move(run_dir)) {
  checkpoint::refuse_fresh_start_over_checkpoints(run_dir_, resume);
  if (!resume) return;
  const auto existing = checkpoint::list_checkpoints(run_dir_);
  if (existing.empty()) return;
  path_ = existing.back();
  reader_.emplace(path_);
  stored_ = reader_->config();
  step_ = reader_->state().step;
}

void Resume::restore(torch::nn::Module& model, torch::optim::Adam& optimizer,
                     const RunConfig& config, checkpoint::TrainingState& state,
                     BatchStream& batches, const distributed::Communicator& comm) const {
  if (!resuming()) return;
  const std::string vocab_sha256 = state.vocab_sha256;  // the shards'
  std::string vocab_model = std::move(state.vocab_model);
  const std::string run_uid = state.run_uid;
  reader_->load(model, &optimizer, config);
  state = reader_->state();
  reader_.reset();
  checkpoint::check_vocabulary(path_, state, vocab_sha256, config.data.dir + " (manifest)");
  if (!run_uid.empty() && !state.run_uid.empty() && state.run_uid != run_uid) {
    throw std::runtime_error(fmt::format(
        "{} was written by the run of uid {}, but {} is the run of uid {} (its run.json): the "
        "directory mixes two runs; move the checkpoint out or start a new run directory",
        path_, state.run_uid, run_dir_, run_uid));
  }
  state.vocab_sha256 = vocab_sha256;
  state.vocab_model = std::move(vocab_model);  // also where the resumed file carries none
  if (!run_uid.empty()) state.run_uid = run_uid;
  batches.seek({state.epoch, state.batch_in_epoch});
  if (comm.is_root()) {
    spdlog::info("resumed from {} at step {} (epoch {}, batch {})", path_, state.step, state.epoch,
                 state.batch_in_epoch);
  }
}

}  // namespace nmt::train
