#include "trainer/checkpoint/averaging.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <torch/utils.h>

#include <stdexcept>

#include "trainer/checkpoint/checkpoint.h"
#include "trainer/model/transformer.h"

namespace nmt::checkpoint {
namespace {

void check_same_model(const RunConfig& first, const std::string& first_path, const RunConfig& other,
                      const std::string& other_path) {
  const auto differences = model_config_differences(first.model, other.model);
  if (!differences.empty()) {
    throw std::runtime_error(fmt::format("cannot average {} with {}: different model configs ({})",
                                         first_path, other_path, fmt::join(differences, "; ")));
  }
}

}  // namespace

std::vector<std::string> last_checkpoints(const std::string& run_dir, std::int64_t count,
                                          const std::string& run_uid) {
  const auto all = list_checkpoints(run_dir);
  if (count < 1 || static_cast<std::int64_t>(all.size()) < count) {
    throw std::runtime_error(
        fmt::format("{} has {} step checkpoints, {} requested", run_dir, all.size(), count));
  }
  std::vector<std::string> chosen(all.end() - count, all.end());
  std::string uid = run_uid, uid_from = run_dir + "/run.json";
  for (const auto& path : chosen) {
    const std::string own = CheckpointReader(path).state().run_uid;
    if (own.empty()) continue;
    if (uid.empty()) {
      uid = own;
      uid_from = path;
    } else if (own != uid) {
      throw std::runtime_error(fmt::format(
          "{} was written by the run of uid {}, but {} names uid {}: {} mixes checkpoints of two "
          "runs; average explicit files with --inputs if that is meant",
          path, own, uid_from, uid, run_dir));
    }
  }
  return chosen;
}

TrainingState average_checkpoints(const std::vector<std::string>& inputs,
                                  const std::string& output) {
  if (inputs.empty()) throw std::invalid_argument("no checkpoints to average");
  CheckpointReader first(inputs.front());
  const RunConfig config = first.config();
  // Its parameters hold the running mean, mean_k = mean_{k-1} + (x_k - mean_{k-1}) / k, in
  // float32: identical inputs give back exactly the input (a sum then a division would round).
  // Each input is read one tensor at a time, so memory holds one model and one tensor, whatever K.
  model::Transformer model(config.model);
  torch::NoGradGuard no_grad;
  const auto mean = model->parameters();
  TrainingState newest;
  RunConfig newest_config = config;  // the average carries it: a resumed run's later decode: etc.
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const auto& path = inputs[k];
    const CheckpointReader input = k == 0 ? std::move(first) : CheckpointReader(path);
    const RunConfig& input_config = input.config();
    check_same_model(config, inputs.front(), input_config, path);
    // read_parameters checks every parameter's presence, shape, checksum and finiteness and
    // names the file: a corrupt input never reaches the average.
    const double count = static_cast<double>(k + 1);
    input.read_parameters(*model, config, [&](std::size_t i, at::Tensor x) {
      if (k == 0) {
        mean[i].copy_(x);
      } else {
        mean[i].add_(x.sub_(mean[i]).div_(count));  // x is ours: (x - mean) / k in place
      }
    });
    const TrainingState& state = input.state();
    if (k > 0 && state.vocab_sha256 != newest.vocab_sha256) {
      throw std::runtime_error(fmt::format(
          "cannot average {} with {}: trained with different vocabularies (SHA-256 {} vs {})",
          inputs.front(), path, newest.vocab_sha256.empty() ? "unknown" : newest.vocab_sha256,
          state.vocab_sha256.empty() ? "unknown" : state.vocab_sha256));
    }
    std::string vocab_model = k == 0 ? std::string() : std::move(newest.vocab_model);
    if (k == 0 || state.step >= newest.step) {
      newest = state;
      newest_config = input_config;
    }
    // The SentencePiece model of any input that carries one (their hashes are equal), where the
    // newest carries none.
    if (newest.vocab_model.empty()) newest.vocab_model = std::move(vocab_model);
    spdlog::info("averaging: added {} (step {})", path, state.step);
  }
  newest.averaged_from = static_cast<std::int64_t>(inputs.size());
  // An average resumes no run: no train/* log window goes with it.
  newest.window_updates = newest.window_tgt_tokens = 0;
  newest.window_loss_sum = newest.window_nll_sum = 0.0;
  // save_checkpoint refuses a non-finite mean, so no NaN average is ever written.
  save_checkpoint(output, *model, nullptr, newest, newest_config);
  newest.vocab_model.clear();
  return newest;
}

}  // namespace nmt::checkpoint
