#include "trainer/checkpoint/checkpoint.h"

#include <ATen/Context.h>
#include <ATen/core/Generator.h>
#include <ATen/ops/empty.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>
#include <torch/utils.h>
#include <yaml-cpp/yaml.h>
#include <zlib.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>
#include <mutex>
#include <regex>
#include <sstream>
#include <type_traits>

#include "common/atomic_file.h"
#include "common/hdf5_file.h"
#include "common/sha256.h"
#include "trainer/optim/adam_state.h"

namespace nmt::checkpoint {
namespace {

namespace fs = std::filesystem;

using optim::adam_state_key;

constexpr const char* kVocabModelDataset = "/vocab/spm.model";
constexpr const char* kStateChecksum = "state_sha256";

// The root attributes an exact resume depends on, covered by state_sha256 (format 3). Not
// format_version: a reader decides by it what else to expect.
enum class AttributeType { kInt, kDouble, kText };
constexpr std::pair<const char*, AttributeType> kStateAttributes[] = {
    {"format", AttributeType::kText},
    {"step", AttributeType::kInt},
    {"epoch", AttributeType::kInt},
    {"batch_in_epoch", AttributeType::kInt},
    {"optimizer_step", AttributeType::kInt},
    {"best_valid_nll", AttributeType::kDouble},
    {"validations_without_improvement", AttributeType::kInt},
    {"elapsed_seconds", AttributeType::kDouble},
    {"averaged_from", AttributeType::kInt},
    {"vocab_sha256", AttributeType::kText},
    {"config", AttributeType::kText},
    {"run_uid", AttributeType::kText},
};

// SHA-256 of the state attributes present in `h5`, each as "name:type:length:value\n" (integers
// in decimal, doubles as the 16 hex digits of their IEEE-754 bits, text as its bytes), so that
// any reader, h5py included, can recompute it.
std::string state_checksum(const Hdf5File& h5) {
  std::string text;
  for (const auto& [name, type] : kStateAttributes) {
    if (!h5.has_attribute("/", name)) continue;
    std::string value;
    char tag = 't';
    switch (type) {
      case AttributeType::kInt:
        value = std::to_string(h5.int_attribute("/", name));
        tag = 'i';
        break;
      case AttributeType::kDouble: {
        const double number = h5.double_attribute("/", name);
        std::uint64_t bits = 0;
        std::memcpy(&bits, &number, sizeof bits);
        value = fmt::format("{:016x}", bits);
        tag = 'd';
        break;
      }
      case AttributeType::kText:
        value = h5.string_attribute("/", name);
        break;
    }
    text += fmt::format("{}:{}:{}:", name, tag, value.size()) + value + "\n";
  }
  return sha256_hex(text);
}

std::vector<std::int64_t> shape_of(const at::Tensor& t) {
  return t.sizes().vec();
}

// CRC-32 of a tensor's bytes (a CPU tensor, contiguous, as stored): catches a flipped bit, not an
// adversary, at a few GB/s.
std::int64_t crc32_of(const at::Tensor& cpu) {
  const auto* bytes = static_cast<const Bytef*>(cpu.data_ptr());
  const auto size = static_cast<z_size_t>(cpu.numel()) * cpu.element_size();
  return static_cast<std::int64_t>(crc32_z(crc32_z(0L, Z_NULL, 0), bytes, size));
}

// NaNs and infinities in a float32 host tensor as stored, counted in place: at::isfinite would
// allocate temporaries of nearly twice the tensor's size.
std::int64_t count_non_finite(const at::Tensor& cpu) {
  const float* values = cpu.data_ptr<float>();
  std::int64_t bad = 0;
  for (std::int64_t i = 0; i < cpu.numel(); ++i) {
    bad += !(std::fabs(values[i]) <= std::numeric_limits<float>::max());  // NaN compares false
  }
  return bad;
}

// A tensor as stored: float32, row-major, in host memory (the tensor itself when it already is).
at::Tensor stored_form(const at::Tensor& tensor) {
  return tensor.detach().to(at::kCPU, at::kFloat).contiguous();
}

// The tensors of one checkpoint. Each is checked and checksummed as it is added, its dataset only
// reserved in the file; write() then copies their bytes into the file one tensor at a time, from
// the tensors' own memory when they are float32 on the host.
class TensorWriter {
 public:
  explicit TensorWriter(Hdf5File& h5) : h5_(h5) {}

  void add(const std::string& name, const at::Tensor& tensor) {
    const auto cpu = stored_form(tensor);
    if (const auto bad = count_non_finite(cpu); bad > 0) {
      throw std::runtime_error(fmt::format(
          "'{}' holds {} non-finite values (NaN or Inf): refusing to save it", name, bad));
    }
    h5_.reserve_array<float>(name, shape_of(cpu));
    h5_.set_attribute(name, "crc32", crc32_of(cpu));
    tensors_.push_back(tensor);
  }

  void write(const std::string& path) {
    h5_.save(path, [this](std::size_t index, const Hdf5File::ByteSink& sink) {
      const auto cpu = stored_form(tensors_[index]);
      sink(cpu.data_ptr(), static_cast<std::size_t>(cpu.numel()) * cpu.element_size());
    });
  }

 private:
  Hdf5File& h5_;
  std::vector<at::Tensor> tensors_;  // in the order their datasets were reserved
};

// Format 2 files carry a checksum per tensor; `checked` is false for format 1.
void verify_checksum(const Hdf5File& h5, const std::string& name, const at::Tensor& cpu,
                     bool checked) {
  if (!checked) return;
  const std::int64_t stored = h5.int_attribute(name, "crc32");
  const std::int64_t actual = crc32_of(cpu);
  if (stored != actual) {
    throw std::runtime_error(fmt::format(
        "{}: '{}' fails its checksum (stored crc32 {:08x}, read {:08x}): the file is corrupt; "
        "use an earlier checkpoint",
        h5.path(), name, stored, actual));
  }
}

// A stored tensor of `like`'s shape, verified, as float32 in host memory: one tensor's worth of
// memory, read straight into by HDF5.
at::Tensor read_stored(const Hdf5File& h5, const std::string& name, const at::Tensor& like,
                       bool checked) {
  const auto stored = h5.shape(name);
  if (stored != shape_of(like)) {
    throw std::runtime_error(fmt::format("{}: '{}' has shape [{}] but the model has [{}]",
                                         h5.path(), name, fmt::join(stored, ", "),
                                         fmt::join(like.sizes(), ", ")));
  }
  auto cpu = at::empty(like.sizes(), at::TensorOptions().dtype(at::kFloat));
  h5.read_array(name, cpu.data_ptr<float>(), static_cast<std::size_t>(cpu.numel()));
  verify_checksum(h5, name, cpu, checked);
  if (const auto bad = count_non_finite(cpu); bad > 0) {
    throw std::runtime_error(
        fmt::format("{}: '{}' holds {} non-finite values (NaN or Inf): refusing to load it",
                    h5.path(), name, bad));
  }
  return cpu;
}

at::Tensor read_tensor(const Hdf5File& h5, const std::string& name, const at::Tensor& like,
                       bool checked) {
  return read_stored(h5, name, like, checked).to(like.device(), like.scalar_type());
}

void write_rng(Hdf5File& h5, const std::string& name, at::Generator generator) {
  std::lock_guard<std::mutex> lock(generator.mutex());
  const auto state = generator.get_state().contiguous();  // uint8 bytes
  h5.write_array(name, state.data_ptr<std::uint8_t>(), shape_of(state));
  h5.set_attribute(name, "crc32", crc32_of(state));
}

void read_rng(const Hdf5File& h5, const std::string& name, at::Generator generator, bool checked) {
  std::lock_guard<std::mutex> lock(generator.mutex());
  auto state = at::empty(h5.shape(name), at::TensorOptions().dtype(at::kByte));
  h5.read_array(name, state.data_ptr<std::uint8_t>(), static_cast<std::size_t>(state.numel()));
  verify_checksum(h5, name, state, checked);
  generator.set_state(state);
}

void write_optimizer(Hdf5File& h5, TensorWriter& tensors, const torch::nn::Module& model,
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

void read_optimizer(const Hdf5File& h5, const torch::nn::Module& model, torch::optim::Adam& adam,
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

void write_state(Hdf5File& h5, const TrainingState& s, const RunConfig& config) {
  h5.set_attribute("/", "format", std::string(kCheckpointFormat));
  h5.set_attribute("/", "format_version", kCheckpointFormatVersion);
  h5.set_attribute("/", "step", s.step);
  h5.set_attribute("/", "epoch", s.epoch);
  h5.set_attribute("/", "batch_in_epoch", s.batch_in_epoch);
  h5.set_attribute("/", "best_valid_nll", s.best_valid_nll);
  h5.set_attribute("/", "validations_without_improvement", s.validations_without_improvement);
  h5.set_attribute("/", "elapsed_seconds", s.elapsed_seconds);
  h5.set_attribute("/", "averaged_from", s.averaged_from);
  h5.set_attribute("/", "vocab_sha256", s.vocab_sha256);
  h5.set_attribute("/", "config", to_yaml(config));
  h5.set_attribute("/", "run_uid", s.run_uid);
  if (!s.vocab_model.empty()) {
    // A mismatch here is a caller's bug; caught now, not as a "corrupt" file at the next load.
    if (sha256_hex(s.vocab_model) != s.vocab_sha256) {
      throw std::logic_error(fmt::format(
          "the SentencePiece model to store has SHA-256 {}, not the state's vocab_sha256 '{}'",
          sha256_hex(s.vocab_model), s.vocab_sha256));
    }
    h5.write_array(kVocabModelDataset, reinterpret_cast<const std::uint8_t*>(s.vocab_model.data()),
                   {static_cast<std::int64_t>(s.vocab_model.size())});
  }
  // Last: every attribute it covers is set by now (optimizer_step by write_optimizer).
  h5.set_attribute("/", kStateChecksum, state_checksum(h5));
}

// Opens and checks the format; every read error names the file.
Hdf5File open_checkpoint(const std::string& path) {
  Hdf5File h5(path, Hdf5File::Mode::kRead);
  const std::string format = h5.string_attribute("/", "format");
  const std::int64_t version = h5.int_attribute("/", "format_version");
  if (format != kCheckpointFormat || version < kOldestReadableFormatVersion ||
      version > kCheckpointFormatVersion) {
    throw std::runtime_error(fmt::format(
        "{}: not an {} file of version {} to {} (format '{}', version {})", path, kCheckpointFormat,
        kOldestReadableFormatVersion, kCheckpointFormatVersion, format, version));
  }
  if (h5.has_attribute("/", kStateChecksum)) {
    const std::string stored = h5.string_attribute("/", kStateChecksum);
    const std::string computed = state_checksum(h5);
    if (stored != computed) {
      throw std::runtime_error(fmt::format(
          "{}: the training state attributes (step, epoch, batch_in_epoch, optimizer_step, "
          "config, ...) fail their checksum ({} stored, {} computed): an attribute was changed "
          "after the file was written; the file is corrupt",
          path, kStateChecksum, stored, computed));
    }
  } else if (version >= 3) {
    throw std::runtime_error(
        fmt::format("{}: a format {} checkpoint without its {} attribute: the file is corrupt",
                    path, version, kStateChecksum));
  }
  return h5;
}

// Format 2 and later carry checksums and the vocabulary's hash.
bool has_checksums(const Hdf5File& h5) {
  return h5.int_attribute("/", "format_version") >= 2;
}

TrainingState read_state(const Hdf5File& h5) {
  TrainingState s;
  s.step = h5.int_attribute("/", "step");
  s.epoch = h5.int_attribute("/", "epoch");
  s.batch_in_epoch = h5.int_attribute("/", "batch_in_epoch");
  s.best_valid_nll = h5.double_attribute("/", "best_valid_nll");
  s.validations_without_improvement = h5.int_attribute("/", "validations_without_improvement");
  s.elapsed_seconds = h5.double_attribute("/", "elapsed_seconds");
  s.averaged_from = h5.int_attribute("/", "averaged_from");
  if (has_checksums(h5)) s.vocab_sha256 = h5.string_attribute("/", "vocab_sha256");
  if (h5.has_attribute("/", "run_uid")) s.run_uid = h5.string_attribute("/", "run_uid");
  if (h5.exists(kVocabModelDataset)) {
    const auto bytes = h5.read<std::uint8_t>(kVocabModelDataset);
    s.vocab_model.assign(bytes.begin(), bytes.end());
    const std::string sha = sha256_hex(s.vocab_model);
    if (sha != s.vocab_sha256) {
      throw std::runtime_error(fmt::format(
          "{}: the SentencePiece model stored in the checkpoint ({}) has SHA-256 {}, not the "
          "recorded {}: the file is corrupt",
          h5.path(), kVocabModelDataset, sha, s.vocab_sha256));
    }
  }
  return s;
}

// Hands `use` every parameter of `like` as stored in the checkpoint `h5` (see read_parameters).
void read_model_tensors(const Hdf5File& h5, const torch::nn::Module& like,
                        const RunConfig& expected, const ParameterUse& use) {
  const std::string& path = h5.path();
  const RunConfig stored = parse_run_config(h5.string_attribute("/", "config"), path);
  const auto differences = model_config_differences(stored.model, expected.model);
  if (!differences.empty()) {
    throw std::runtime_error(fmt::format(
        "{}: checkpoint was trained with a different model config ({}); load it with its own "
        "config or start a new run",
        path, fmt::join(differences, "; ")));
  }
  const bool checked = has_checksums(h5);
  if (!checked) {
    spdlog::warn("{}: a format 1 checkpoint (before checksums): its tensors cannot be verified",
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
    Hdf5File h5(path, Hdf5File::Mode::kStreaming);
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

RunConfig read_checkpoint_config(const std::string& path) {
  const Hdf5File h5 = open_checkpoint(path);
  return parse_run_config(h5.string_attribute("/", "config"), path + " (stored config)");
}

TrainingState read_training_state(const std::string& path) {
  return read_state(open_checkpoint(path));
}

TrainingState read_parameters(const std::string& path, const torch::nn::Module& like,
                              const RunConfig& expected, const ParameterUse& use) {
  const Hdf5File h5 = open_checkpoint(path);
  read_model_tensors(h5, like, expected, use);
  return read_state(h5);
}

TrainingState load_checkpoint(const std::string& path, torch::nn::Module& model,
                              torch::optim::Adam* optimizer, const RunConfig& expected) {
  const Hdf5File h5 = open_checkpoint(path);
  {
    torch::NoGradGuard no_grad;
    const auto params = model.parameters();
    read_model_tensors(h5, model, expected,
                       [&](std::size_t i, at::Tensor stored) { params[i].copy_(stored); });
  }
  const bool checked = has_checksums(h5);
  if (optimizer != nullptr) {
    read_optimizer(h5, model, *optimizer, checked);
    read_rng(h5, "/rng/cpu", at::globalContext().defaultGenerator(at::kCPU), checked);
    const auto device =
        model.parameters().empty() ? at::Device(at::kCPU) : model.parameters()[0].device();
    if (device.is_cuda() && h5.exists("/rng/cuda")) {
      read_rng(h5, "/rng/cuda", at::globalContext().defaultGenerator(device), checked);
    }
  }
  return read_state(h5);
}

void check_vocabulary(const std::string& path, const TrainingState& state,
                      const std::string& vocab_sha256, const std::string& vocab_name) {
  if (state.vocab_sha256.empty()) {
    spdlog::warn(
        "{}: a format 1 checkpoint records no vocabulary hash: cannot check that {} is "
        "the vocabulary it was trained with",
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

std::string checkpoint_path(const std::string& run_dir, std::int64_t step) {
  return (fs::path(run_dir) / "checkpoints" / fmt::format("step-{:08}.h5", step)).string();
}

std::vector<std::string> list_checkpoints(const std::string& run_dir) {
  std::vector<std::string> found;
  const fs::path dir = fs::path(run_dir) / "checkpoints";
  if (!fs::exists(dir)) return found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("step-", 0) == 0 && entry.path().extension() == ".h5") {
      found.push_back(entry.path().string());
    }
  }
  std::sort(found.begin(), found.end());  // zero-padded steps sort by name
  return found;
}

void refuse_fresh_start_over_checkpoints(const std::string& run_dir, bool resume) {
  if (resume || list_checkpoints(run_dir).empty()) return;
  throw std::runtime_error(run_dir +
                           " already holds checkpoints: pass --resume to continue it, or choose "
                           "another --run-dir");
}

void prune_checkpoints(const std::string& run_dir, std::int64_t keep) {
  auto all = list_checkpoints(run_dir);
  for (std::size_t i = 0; i + static_cast<std::size_t>(keep) < all.size(); ++i) fs::remove(all[i]);
  remove_stale_temporaries(run_dir);
}

std::vector<std::string> remove_stale_temporaries(const std::string& run_dir) {
  // The temporaries of the trainer's atomic writes: NAME.tmp.PID.
  static const std::regex kTemporary(
      R"((step-[0-9]+\.h5|best\.h5|config\.yaml|run\.json|metrics\.jsonl)\.tmp\.([0-9]+))");
  const std::string self = std::to_string(::getpid());
  std::vector<std::string> removed;
  for (const fs::path& dir : {fs::path(run_dir), fs::path(run_dir) / "checkpoints"}) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    for (const auto& entry : fs::directory_iterator(dir)) {
      std::smatch match;
      const std::string name = entry.path().filename().string();
      if (!std::regex_match(name, match, kTemporary) || match[2] == self) continue;
      const auto bytes =
          fs::is_regular_file(entry.path(), ec) ? fs::file_size(entry.path(), ec) : 0;
      if (fs::remove(entry.path(), ec)) {
        spdlog::info("removed {} ({} bytes), left by process {} that ended before renaming it",
                     entry.path().string(), bytes, match[2].str());
        removed.push_back(entry.path().string());
      } else if (ec) {
        spdlog::warn("cannot remove the stale temporary {}: {}", entry.path().string(),
                     ec.message());
      }
    }
  }
  return removed;
}

}  // namespace nmt::checkpoint
