#include "trainer/checkpoint/checkpoint.h"

#include <ATen/Context.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <torch/utils.h>
#include <yaml-cpp/yaml.h>

#include <memory>
#include <stdexcept>

#include "common/hdf5_file.h"
#include "trainer/checkpoint/checkpoint_state.h"
#include "trainer/checkpoint/checkpoint_tensors.h"
#include "trainer/optim/adam_state.h"

namespace nmt::checkpoint {
namespace {

using optim::adam_state_key;

void write_optimizer(Hdf5Writer& h5, TensorWriter& tensors, const torch::nn::Module& model,
                     const torch::optim::Adam& adam) {
  std::int64_t step = 0;
  for (const auto& item : model.named_parameters()) {
    const auto it = adam.state().find(adam_state_key(adam.state(), item.value()));
    if (it == adam.state().end()) continue;  // no update yet
    const auto& s = static_cast<const torch::optim::AdamParamState&>(*it->second);
    tensors.add("/optimizer/" + item.key() + "/exp_avg", s.exp_avg());
    tensors.add("/optimizer/" + item.key() + "/exp_avg_sq", s.exp_avg_sq());
    step = s.step();
  }
  h5.set_attribute("/", "optimizer_step", step);
}

void read_optimizer(const Hdf5Reader& h5, const torch::nn::Module& model, torch::optim::Adam& adam,
                    bool checked) {
  const std::int64_t step = h5.int_attribute("/", "optimizer_step");
  for (const auto& item : model.named_parameters()) {
    const std::string base = "/optimizer/" + item.key();
    if (!h5.exists(base + "/exp_avg")) {
      if (step > 0) throw std::runtime_error(h5.path() + ": no optimizer state for " + item.key());
      continue;
    }
    const auto key = adam_state_key(adam.state(), item.value());
    const auto it = adam.state().find(key);
    if (it != adam.state().end()) {
      // Into the moments the optimizer holds: one stored tensor in memory at a time, where new
      // moments would hold two and the old ones until replaced.
      auto& s = static_cast<torch::optim::AdamParamState&>(*it->second);
      if (s.exp_avg().defined() && s.exp_avg_sq().defined() &&
          s.exp_avg().sizes() == item.value().sizes() &&
          s.exp_avg_sq().sizes() == item.value().sizes()) {
        s.step(step);
        s.exp_avg().copy_(read_stored(h5, base + "/exp_avg", item.value(), checked));
        s.exp_avg_sq().copy_(read_stored(h5, base + "/exp_avg_sq", item.value(), checked));
        continue;
      }
    }
    auto state = std::make_unique<torch::optim::AdamParamState>();
    state->step(step);
    state->exp_avg(read_tensor(h5, base + "/exp_avg", item.value(), checked));
    state->exp_avg_sq(read_tensor(h5, base + "/exp_avg_sq", item.value(), checked));
    adam.state()[key] = std::move(state);
  }
}

// Hands `use` every parameter of `like` as stored in the checkpoint `h5`, whose config is
// `stored` (see CheckpointReader::read_parameters).
void read_model_tensors(const Hdf5Reader& h5, const RunConfig& stored,
                        const torch::nn::Module& like, const RunConfig& expected,
                        const ParameterUse& use) {
  const std::string& path = h5.path();
  const auto differences = model_config_differences(stored.model, expected.model);
  if (!differences.empty()) {
    throw std::runtime_error(fmt::format(
        "{}: checkpoint was trained with a different model config ({}); load it with its own "
        "config or start a new run",
        path, fmt::join(differences, "; ")));
  }
  const bool checked = has_checksums(h5);
  if (!checked) {
    spdlog::warn(
        "{}: a checkpoint of the oldest format (before checksums): its tensors cannot be "
        "verified",
        path);
  }
  const auto params = like.named_parameters();
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::string name = "/model/" + params[i].key();
    if (!h5.exists(name))
      throw std::runtime_error(path + ": parameter " + params[i].key() + " missing");
    use(i, read_stored(h5, name, params[i].value(), checked));
  }
}

}  // namespace

std::vector<std::string> model_config_differences(const model::ModelConfig& a,
                                                  const model::ModelConfig& b) {
  const YAML::Node x = YAML::Load(to_yaml(a)), y = YAML::Load(to_yaml(b));
  std::vector<std::string> differences;
  for (const auto& entry : x) {
    const std::string key = entry.first.Scalar();
    if (entry.second.Scalar() != y[key].Scalar()) {
      differences.push_back(
          fmt::format("{}: {} vs {}", key, entry.second.Scalar(), y[key].Scalar()));
    }
  }
  return differences;
}

void save_checkpoint(const std::string& path, const torch::nn::Module& model,
                     const torch::optim::Adam* optimizer, const TrainingState& state,
                     const RunConfig& config) {
  try {
    // HDF5 builds the structure in memory and never meets a full disk itself; the tensors' bytes
    // go from their memory into the file by checked writes of ours.
    Hdf5Writer h5(path);
    TensorWriter tensors(h5);
    for (const auto& item : model.named_parameters())
      tensors.add("/model/" + item.key(), item.value());
    if (optimizer != nullptr)
      write_optimizer(h5, tensors, model, *optimizer);
    else
      h5.set_attribute("/", "optimizer_step", std::int64_t{0});
    write_rng(h5, "/rng/cpu", at::globalContext().defaultGenerator(at::kCPU));
    const auto device =
        model.parameters().empty() ? at::Device(at::kCPU) : model.parameters()[0].device();
    if (device.is_cuda()) write_rng(h5, "/rng/cuda", at::globalContext().defaultGenerator(device));
    write_state(h5, state, config);
    // A temporary name, checked writes, fsync, rename: nothing half-written stays under either
    // name, and an earlier file at `path` is untouched.
    tensors.write(path);
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("checkpoint {} not written: {}", path, e.what()));
  }
}

CheckpointReader::CheckpointReader(const std::string& path)
    : path_(path), h5_(std::make_unique<Hdf5Reader>(open_checkpoint(path))) {
  state_ = read_state(*h5_);
  config_ = parse_run_config(h5_->string_attribute("/", "config"), path + " (stored config)");
}

CheckpointReader::~CheckpointReader() = default;
CheckpointReader::CheckpointReader(CheckpointReader&&) noexcept = default;
CheckpointReader& CheckpointReader::operator=(CheckpointReader&&) noexcept = default;

void CheckpointReader::read_parameters(const torch::nn::Module& like, const RunConfig& expected,
                                       const ParameterUse& use) const {
  read_model_tensors(*h5_, config_, like, expected, use);
}

void CheckpointReader::load(torch::nn::Module& model, torch::optim::Adam* optimizer,
                            const RunConfig& expected) const {
  {
    torch::NoGradGuard no_grad;
    const auto params = model.parameters();
    read_parameters(model, expected,
                    [&](std::size_t i, at::Tensor stored) { params[i].copy_(stored); });
  }
  if (optimizer == nullptr) return;
  const bool checked = has_checksums(*h5_);
  read_optimizer(*h5_, model, *optimizer, checked);
  read_rng(*h5_, "/rng/cpu", at::globalContext().defaultGenerator(at::kCPU), checked);
  const auto device =
      model.parameters().empty() ? at::Device(at::kCPU) : model.parameters()[0].device();
  if (device.is_cuda() && h5_->exists("/rng/cuda")) {
    read_rng(*h5_, "/rng/cuda", at::globalContext().defaultGenerator(device), checked);
  }
}

TrainingState load_checkpoint(const std::string& path, torch::nn::Module& model,
                              torch::optim::Adam* optimizer, const RunConfig& expected) {
  const CheckpointReader reader(path);
  reader.load(model, optimizer, expected);
  return reader.state();
}

void check_vocabulary(const std::string& path, const TrainingState& state,
                      const std::string& vocab_sha256, const std::string& vocab_name) {
  if (state.vocab_sha256.empty()) {
    spdlog::warn(
        "{}: the checkpoint records no vocabulary hash (the oldest format): cannot check that {} "
        "is the vocabulary it was trained with",
        path, vocab_name);
    return;
  }
  if (state.vocab_sha256 != vocab_sha256) {
    throw std::runtime_error(fmt::format(
        "{} was trained with the vocabulary of SHA-256 {}, but {} has SHA-256 {}: use the "
        "SentencePiece model the checkpoint was trained with",
        path, state.vocab_sha256, vocab_name, vocab_sha256));
  }
}

}  // namespace nmt::checkpoint
