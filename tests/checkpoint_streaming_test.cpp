// Checkpoints of any size in bounded memory: HDF5 lays out a kStreaming file in memory and the
// reserved datasets' bytes go straight from their buffers into the file; a checkpoint round-trips
// bit for bit and reads back with h5py alone; a save holds a small fraction of the state on top
// of it, a load one tensor, an average one model and one tensor; the streamed average equals the
// in-memory running mean bit for bit; a full disk is an error naming the file and the cause that
// leaves no temporary, the earlier checkpoint intact, and HDF5 working.

#include <ATen/ops/equal.h>
#include <ATen/ops/rand.h>
#include <ATen/ops/randn.h>
#include <dlfcn.h>
#include <malloc.h>
#include <torch/cuda.h>
#include <torch/utils.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>

#include "common/hdf5_file.h"
#include "common/proc_memory.h"
#include "common/sha256.h"
#include "test_utils.h"
#include "tiny_training.h"
#include "trainer/checkpoint/averaging.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/model/transformer.h"
#include "trainer/optim/adam_state.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;
using testing::load_model;
using testing::read_text;
using testing::TempDir;
using testing::tiny_config;
using testing::write_data;

std::set<std::string> files_in(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename());
  return names;
}

std::vector<float> ramp(std::size_t n, float start) {
  std::vector<float> values(n);
  std::iota(values.begin(), values.end(), start);
  return values;
}

// The process's memory as /proc/self/status reports it, in bytes ("VmRSS", "VmHWM").
std::int64_t status_bytes(const std::string& key) {
  return static_cast<std::int64_t>(proc_status_kb(key)) * 1024;
}

// The peak resident memory above the resident memory at construction. Freed memory goes back to
// the system at once (tcmalloc, which the LibTorch tools link, keeps it by default; glibc unmaps
// large blocks), so that the figure counts live memory, and an operation cannot hide in memory
// freed before it.
class PeakMemory {
 public:
  PeakMemory() {
    using SetProperty = int (*)(const char*, std::size_t);
    if (auto set = reinterpret_cast<SetProperty>(
            dlsym(RTLD_DEFAULT, "MallocExtension_SetNumericProperty"))) {
      set("tcmalloc.aggressive_memory_decommit", 1);
    }
    ok_ = reset_peak_memory();
    base_ = status_bytes("VmRSS");
  }
  bool ok() const { return ok_ && base_ > 0; }
  std::int64_t extra() const { return status_bytes("VmHWM") - base_; }

 private:
  bool ok_ = false;
  std::int64_t base_ = 0;
};

std::int64_t bytes_of(const std::vector<at::Tensor>& tensors) {
  std::int64_t bytes = 0;
  for (const auto& t : tensors) bytes += t.numel() * t.element_size();
  return bytes;
}

// Adam's state as training leaves it, without training: moments of every parameter at `step`.
void fill_adam_state(const torch::nn::Module& model, torch::optim::Adam& adam, std::int64_t step) {
  for (const auto& p : model.parameters()) {
    auto state = std::make_unique<torch::optim::AdamParamState>();
    state->step(step);
    state->exp_avg(at::randn(p.sizes()) * 1e-3);
    state->exp_avg_sq(at::rand(p.sizes()) * 1e-6);
    adam.state()[optim::adam_state_key(adam.state(), p)] = std::move(state);
  }
}

const torch::optim::AdamParamState& adam_state(const torch::optim::Adam& adam,
                                               const at::Tensor& p) {
  return static_cast<const torch::optim::AdamParamState&>(
      *adam.state().at(optim::adam_state_key(adam.state(), p)));
}

// A state of the size a test chooses: `count` parameters of `rows` x 256 floats.
struct Blocks : torch::nn::Module {
  Blocks(int count, std::int64_t rows) {
    for (int i = 0; i < count; ++i)
      register_parameter("block" + std::to_string(i), at::randn({rows, 256}));
  }
};

TEST(StreamingHdf5File, WritesReservedDatasetsAtTheirPlaces) {
  TempDir dir;
  const std::string path = dir.file("s.h5");
  // Several pages, one element, none.
  const std::vector<std::vector<std::int64_t>> shapes = {{600, 500}, {3, 5}, {}, {0}};
  std::vector<std::vector<float>> data;
  for (const auto& shape : shapes) {
    const auto n =
        std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>());
    data.push_back(ramp(static_cast<std::size_t>(n), static_cast<float>(data.size() * 1000)));
  }
  {
    Hdf5Writer h5(path);
    h5.write("/small/ids", std::vector<std::int32_t>{4, 5, 6});
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      const std::string name = "/big/t" + std::to_string(i);
      h5.reserve_array<float>(name, shapes[i]);
      h5.set_attribute(name, "index", static_cast<std::int64_t>(i));
    }
    h5.set_attribute("/", "title", std::string("streamed"));
    h5.save(path, [&](std::size_t i, const Hdf5Writer::ByteSink& write) {
      const auto* bytes = reinterpret_cast<const char*>(data[i].data());
      const std::size_t size = data[i].size() * sizeof(float), half = size / 2;
      write(bytes, half);  // in two pieces
      write(bytes + half, size - half);
    });
  }
  EXPECT_EQ(files_in(dir.path()), std::set<std::string>{"s.h5"});
  Hdf5Reader h5(path);
  EXPECT_EQ(h5.read<std::int32_t>("/small/ids"), (std::vector<std::int32_t>{4, 5, 6}));
  EXPECT_EQ(h5.string_attribute("/", "title"), "streamed");
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const std::string name = "/big/t" + std::to_string(i);
    EXPECT_EQ(h5.shape(name), shapes[i]) << name;
    std::vector<float> back(data[i].size());
    h5.read_array(name, back.data(), back.size());
    EXPECT_EQ(back, data[i]) << name;
    EXPECT_EQ(h5.int_attribute(name, "index"), static_cast<std::int64_t>(i));
  }
}

TEST(StreamingHdf5File, AFailedFillLeavesTheEarlierFileAndNoTemporary) {
  TempDir dir;
  const std::string path = dir.file("s.h5");
  testing::write_text(path, "earlier");
  const auto values = ramp(1000, 0);
  const auto reserve_two = [&](Hdf5Writer& h5) {
    h5.reserve_array<float>("/a", {1000});
    h5.reserve_array<float>("/b", {1000});
  };
  {
    Hdf5Writer h5(path);
    reserve_two(h5);
    NMT_EXPECT_THROW_WITH(h5.save(path,
                                  [&](std::size_t i, const Hdf5Writer::ByteSink& write) {
                                    if (i == 1) throw std::runtime_error("the source failed");
                                    write(values.data(), values.size() * sizeof(float));
                                  }),
                          std::runtime_error, "the source failed");
  }
  EXPECT_EQ(read_text(path), "earlier");
  EXPECT_EQ(files_in(dir.path()), std::set<std::string>{"s.h5"});
  {
    Hdf5Writer h5(path);
    reserve_two(h5);
    NMT_EXPECT_THROW_WITH(
        h5.save(path,
                [&](std::size_t, const Hdf5Writer::ByteSink& write) { write(values.data(), 10); }),
        Hdf5Error, path.c_str(), "'/a' takes 4000 bytes, only 10");
  }
  EXPECT_EQ(read_text(path), "earlier");
  EXPECT_EQ(files_in(dir.path()), std::set<std::string>{"s.h5"});
}

// Parameters, Adam's moments and step, RNG state and vocabulary come back bit for bit, and h5py
// alone reads the file: float32 tensors whose crc32 attributes match their bytes.
TEST(CheckpointStreaming, RoundTripsBitForBitAndReadsWithH5py) {
  TempDir dir;
  const auto config = tiny_config(write_data(dir, 16));
  torch::manual_seed(3);
  model::Transformer model(config.model);
  torch::optim::Adam adam(model->parameters());
  fill_adam_state(*model, adam, 17);
  checkpoint::TrainingState state;
  state.step = 17;
  state.vocab_model = std::string(5000, '\x07');
  state.vocab_sha256 = sha256_hex(state.vocab_model);
  const std::string path = dir.file("c.h5");
  checkpoint::save_checkpoint(path, *model, &adam, state, config);

  model::Transformer loaded(config.model);
  torch::optim::Adam loaded_adam(loaded->parameters());
  const auto back = checkpoint::load_checkpoint(path, *loaded, &loaded_adam, config);
  EXPECT_EQ(back.step, 17);
  EXPECT_EQ(back.vocab_model, state.vocab_model);
  const auto expected = model->named_parameters();
  for (const auto& item : loaded->named_parameters()) {
    const auto& original = expected[item.key()];
    EXPECT_TRUE(at::equal(item.value(), original)) << item.key();
    const auto& a = adam_state(adam, original);
    const auto& b = adam_state(loaded_adam, item.value());
    EXPECT_EQ(b.step(), 17);
    EXPECT_TRUE(at::equal(a.exp_avg(), b.exp_avg())) << item.key();
    EXPECT_TRUE(at::equal(a.exp_avg_sq(), b.exp_avg_sq())) << item.key();
  }

  if (std::system("/usr/bin/python3 -c 'import h5py' 2> /dev/null") != 0) {
    GTEST_SKIP() << "no python3 with h5py";
  }
  const std::string check = std::string("/usr/bin/python3 ") + NMT_SOURCE_DIR +
                            "/tests/scripts/check_checkpoint_h5py.py '" + path + "'";
  EXPECT_EQ(std::system(check.c_str()), 0) << check;
}

// A model and Adam's moments on the GPU: each tensor is copied to the host one at a time as it is
// checked and as it is written, and loads back onto the GPU bit for bit.
TEST(CheckpointStreaming, RoundTripsFromAndToTheGpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  TempDir dir;
  const auto config = tiny_config(write_data(dir, 16));
  model::Transformer model(config.model);
  model->to(at::kCUDA);
  torch::optim::Adam adam(model->parameters());
  fill_adam_state(*model, adam, 5);
  for (const auto& p : model->parameters()) {
    auto& s = static_cast<torch::optim::AdamParamState&>(
        *adam.state().at(optim::adam_state_key(adam.state(), p)));
    s.exp_avg(s.exp_avg().to(at::kCUDA));
    s.exp_avg_sq(s.exp_avg_sq().to(at::kCUDA));
  }
  const std::string path = dir.file("gpu.h5");
  checkpoint::save_checkpoint(path, *model, &adam, {}, config);
  model::Transformer loaded(config.model);
  loaded->to(at::kCUDA);
  torch::optim::Adam loaded_adam(loaded->parameters());
  checkpoint::load_checkpoint(path, *loaded, &loaded_adam, config);
  const auto expected = model->named_parameters();
  for (const auto& item : loaded->named_parameters()) {
    const auto& original = expected[item.key()];
    EXPECT_TRUE(item.value().is_cuda());
    EXPECT_TRUE(at::equal(item.value(), original)) << item.key();
    EXPECT_TRUE(at::equal(adam_state(loaded_adam, item.value()).exp_avg_sq(),
                          adam_state(adam, original).exp_avg_sq()))
        << item.key();
  }
}

// The streamed average (one input tensor at a time, into the model's parameters) equals the
// running mean of whole loaded models, mean += (x - mean) / k, in float32, bit for bit.
TEST(CheckpointStreaming, AverageEqualsTheInMemoryRunningMean) {
  TempDir dir;
  const auto config = tiny_config(write_data(dir, 16));
  std::vector<std::string> inputs;
  for (int seed = 1; seed <= 4; ++seed) {
    torch::manual_seed(seed);
    model::Transformer model(config.model);
    checkpoint::TrainingState state;
    state.step = seed * 10;
    state.vocab_sha256 = "tiny";
    inputs.push_back(dir.file("in" + std::to_string(seed) + ".h5"));
    checkpoint::save_checkpoint(inputs.back(), *model, nullptr, state, config);
  }
  std::vector<at::Tensor> mean;
  {
    torch::NoGradGuard no_grad;
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const auto params = load_model(inputs[k], config)->parameters();
      for (std::size_t i = 0; i < params.size(); ++i) {
        if (k == 0) {
          mean.push_back(params[i].clone());
        } else {
          mean[i].add_((params[i] - mean[i]) / static_cast<double>(k + 1));
        }
      }
    }
  }
  const std::string output = dir.file("average.h5");
  checkpoint::average_checkpoints(inputs, output);
  const auto averaged = load_model(output, config)->parameters();
  ASSERT_EQ(averaged.size(), mean.size());
  for (std::size_t i = 0; i < mean.size(); ++i) EXPECT_TRUE(at::equal(averaged[i], mean[i])) << i;
  const auto state = checkpoint::CheckpointReader(output).state();
  EXPECT_EQ(state.averaged_from, 4);
  EXPECT_EQ(state.step, 40);
}

// A save holds a small fraction of the state on top of it (the file's metadata; the tensors are
// written from their own memory), not a copy of the file; a load into the same model holds one
// tensor. The state: 16 tensors of 8 MiB.
TEST(CheckpointStreaming, SaveAndLoadHoldAFractionOfTheState) {
  TempDir dir;
  const auto config = tiny_config(dir.file("data"));
  Blocks blocks(16, 8192);
  const std::int64_t state = bytes_of(blocks.parameters());  // 128 MiB
  const std::string path = dir.file("big.h5");
  {
    PeakMemory peak;
    if (!peak.ok()) GTEST_SKIP() << "the kernel does not let a process reset its peak memory";
    checkpoint::save_checkpoint(path, blocks, nullptr, {}, config);
    EXPECT_LT(peak.extra(), state / 8)
        << "a save took " << peak.extra() << " bytes above a state of " << state;
  }
  EXPECT_GT(static_cast<std::int64_t>(fs::file_size(path)), state);
  PeakMemory peak;
  checkpoint::load_checkpoint(path, blocks, nullptr, config);
  EXPECT_LT(peak.extra(), state / 8)
      << "a load took " << peak.extra() << " bytes above a state of " << state;
}

// Averaging holds one model (the running mean) and a tensor, not two models, whatever K; its
// output is written in bounded memory too.
TEST(CheckpointStreaming, AveragingHoldsOneModel) {
  TempDir dir;
  auto config = tiny_config(dir.file("data"));
  config.model.d_model = 512;
  config.model.d_ff = 2048;
  config.model.heads = 8;
  config.model.d_k = config.model.d_v = 64;
  std::vector<std::string> inputs;
  std::int64_t params = 0;
  for (int k = 0; k < 3; ++k) {
    model::Transformer model(config.model);
    params = bytes_of(model->parameters());
    inputs.push_back(dir.file("in" + std::to_string(k) + ".h5"));
    checkpoint::save_checkpoint(inputs.back(), *model, nullptr, {}, config);
  }
  PeakMemory peak;
  if (!peak.ok()) GTEST_SKIP() << "the kernel does not let a process reset its peak memory";
  checkpoint::average_checkpoints(inputs, dir.file("average.h5"));
  EXPECT_LT(peak.extra(), params * 7 / 5)
      << "averaging took " << peak.extra() << " bytes for a model of " << params;
}

// A full disk (a 3 MiB tmpfs, as root; skipped where mounting is not allowed): a checkpoint with
// Adam's state fits once, not twice. The second save is an error naming the file and the cause;
// nothing stays under its name or a temporary one; the first loads bit for bit; HDF5 goes on
// working in this process (saves and loads elsewhere). Space is reserved before the tensors are
// written: a disk filling up beside a save that has started does not fail it.
TEST(CheckpointStreaming, AFullDiskLeavesNoTemporaryAndTheEarlierCheckpoint) {
  TempDir dir;
  const testing::SmallTmpfs tmpfs(dir, "3m", testing::SmallTmpfs::Unmount::kExpectSuccess);
  if (!tmpfs.mounted()) GTEST_SKIP() << tmpfs.skip_reason();
  const std::string small = tmpfs.point();
  const auto config = tiny_config(write_data(dir, 16));  // 168,960 parameters: 1.9 MiB with Adam
  model::Transformer model(config.model);
  torch::optim::Adam adam(model->parameters());
  fill_adam_state(*model, adam, 1);
  checkpoint::TrainingState state;
  state.step = 1;
  const std::string first = small + "/step-1.h5", second = small + "/step-2.h5";
  checkpoint::save_checkpoint(first, *model, &adam, state, config);
  state.step = 2;
  for (int attempt = 0; attempt < 2; ++attempt) {
    NMT_EXPECT_THROW_WITH(checkpoint::save_checkpoint(second, *model, &adam, state, config),
                          std::runtime_error, second.c_str(), "No space left on device");
    EXPECT_EQ(files_in(small), std::set<std::string>{"step-1.h5"});
  }
  model::Transformer loaded(config.model);
  torch::optim::Adam loaded_adam(loaded->parameters());
  EXPECT_EQ(checkpoint::load_checkpoint(first, *loaded, &loaded_adam, config).step, 1);
  for (const auto& item : loaded->named_parameters()) {
    EXPECT_TRUE(at::equal(item.value(), model->named_parameters()[item.key()])) << item.key();
  }
  const std::string roomy = dir.file("roomy.h5");
  checkpoint::save_checkpoint(roomy, *model, &adam, state, config);
  EXPECT_EQ(checkpoint::CheckpointReader(roomy).state().step, 2);

  fs::remove(first);
  const auto values = ramp(256 * 1024, 0);  // 1 MiB
  Hdf5Writer h5(small + "/s.h5");
  h5.reserve_array<float>("/values", {static_cast<std::int64_t>(values.size())});
  h5.save(small + "/s.h5", [&](std::size_t, const Hdf5Writer::ByteSink& write) {
    std::ofstream filler(small + "/filler", std::ios::binary);
    const std::vector<char> block(64 * 1024, 'x');
    while (filler.write(block.data(), block.size())) {
    }
    write(values.data(), values.size() * sizeof(float));
  });
  Hdf5Reader back(small + "/s.h5");
  std::vector<float> read_back(values.size());
  back.read_array("/values", read_back.data(), read_back.size());
  EXPECT_EQ(read_back, values);
}

}  // namespace
}  // namespace nmt
