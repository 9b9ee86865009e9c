// Checkpoint time and memory at the paper's big model (configs/big.yaml: 214,245,376 parameters,
// 37,000-token shared vocabulary) with Adam's state, the checkpoint a big run writes: parameters,
// exp_avg and exp_avg_sq (about 2.6 GB; built without training). Times one save, one load into the
// same model and optimizer, and nmt-average of K copies of the saved file (hard links in the same
// folder: the file is read from the page cache after the first), and prints each one's peak
// resident memory above what the process held before it, beside the state's size (the averaging's
// beside the parameters' size, the model it holds). What a user of HDF5 would write instead, the
// same datasets written straight into the file by HDF5's default driver (as h5py does; neither
// atomic nor checked against a full disk), is timed and measured in the same run for comparison.
//
//   build/bench/checkpoint_memory_bench [--config configs/big.yaml] [--set model.layers=2 ...]
//       [--dir DIR] [--average 20] [--no-plain-hdf5]
//
// Memory is VmHWM - VmRSS from /proc/self/status, the high-water mark reset before each step
// (/proc/self/clear_refs) after the allocator has given freed memory back; the allocator is the
// tools' (tcmalloc), with its default settings. DIR (default: a fresh folder under the system's
// temporary folder, removed at the end) needs room for two checkpoints.

#include <ATen/ops/rand.h>
#include <ATen/ops/randn.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <hdf5.h>
#include <malloc.h>
#include <torch/utils.h>
#include <zlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>

#include "apps/tool_main.h"
#include "bench/bench_device.h"
#include "common/cli.h"
#include "common/proc_memory.h"
#include "trainer/checkpoint/averaging.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/config/train_config.h"
#include "trainer/model/transformer.h"
#include "trainer/optim/adam_state.h"

namespace {

namespace fs = std::filesystem;

std::int64_t status_bytes(const std::string& key) {
  const long kb = nmt::proc_status_kb(key);
  if (kb < 0) throw std::runtime_error("/proc/self/status has no " + key);
  return static_cast<std::int64_t>(kb) * 1024;
}

struct Measurement {
  double seconds = 0;
  std::int64_t peak_extra = 0;  // bytes above the resident memory before the step
};

Measurement measure(const std::function<void()>& step) {
  if (!nmt::reset_peak_memory()) {
    throw std::runtime_error("cannot reset the peak memory (/proc/self/clear_refs)");
  }
  const std::int64_t before = status_bytes("VmRSS");
  const auto start = std::chrono::steady_clock::now();
  step();
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
  return {took.count(), status_bytes("VmHWM") - before};
}

std::int64_t bytes_of(const std::vector<at::Tensor>& tensors) {
  std::int64_t bytes = 0;
  for (const auto& t : tensors) bytes += t.numel() * t.element_size();
  return bytes;
}

// Adam's state as training leaves it: both moments of every parameter.
void fill_adam_state(const torch::nn::Module& model, torch::optim::Adam& adam) {
  for (const auto& p : model.parameters()) {
    auto state = std::make_unique<torch::optim::AdamParamState>();
    state->step(1000);
    state->exp_avg(at::randn(p.sizes()) * 1e-3);
    state->exp_avg_sq(at::rand(p.sizes()) * 1e-6);
    adam.state()[nmt::optim::adam_state_key(adam.state(), p)] = std::move(state);
  }
}

// HDF5 as a user would call it: the file created at `path` by the default driver, each tensor a
// contiguous dataset written by H5Dwrite with its checksum attribute, then closed.
void save_plain_hdf5(const std::string& path, const torch::nn::Module& model,
                     const torch::optim::Adam& adam) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) throw std::runtime_error(path + ": cannot create");
  const auto add = [&](const std::string& name, const at::Tensor& t) {
    const auto* bytes = static_cast<const Bytef*>(t.data_ptr());
    const auto crc = static_cast<std::int64_t>(
        crc32_z(0L, bytes, static_cast<z_size_t>(t.numel()) * t.element_size()));
    std::vector<hsize_t> dims(t.sizes().begin(), t.sizes().end());
    const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
    const hid_t links = H5Pcreate(H5P_LINK_CREATE);
    H5Pset_create_intermediate_group(links, 1);
    const hid_t set =
        H5Dcreate2(file, name.c_str(), H5T_NATIVE_FLOAT, space, links, H5P_DEFAULT, H5P_DEFAULT);
    const bool written = set >= 0 && H5Dwrite(set, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT,
                                              t.data_ptr<float>()) >= 0;
    const hid_t scalar = H5Screate(H5S_SCALAR);
    const hid_t attr = H5Acreate2(set, "crc32", H5T_NATIVE_INT64, scalar, H5P_DEFAULT, H5P_DEFAULT);
    const bool attributed = attr >= 0 && H5Awrite(attr, H5T_NATIVE_INT64, &crc) >= 0;
    H5Aclose(attr);
    H5Sclose(scalar);
    H5Dclose(set);
    H5Pclose(links);
    H5Sclose(space);
    if (!written || !attributed) throw std::runtime_error(path + ": cannot write " + name);
  };
  for (const auto& item : model.named_parameters()) {
    add("/model/" + item.key(), item.value());
    const auto& s = static_cast<const torch::optim::AdamParamState&>(
        *adam.state().at(nmt::optim::adam_state_key(adam.state(), item.value())));
    add("/optimizer/" + item.key() + "/exp_avg", s.exp_avg());
    add("/optimizer/" + item.key() + "/exp_avg_sq", s.exp_avg_sq());
  }
  if (H5Fclose(file) < 0) throw std::runtime_error(path + ": cannot close");
}

void print_row(const std::string& what, const Measurement& m, std::int64_t reference,
               const std::string& reference_name) {
  std::cout << fmt::format("{:<34}{:>9.1f}{:>14.1f}{:>10.3f}  of the {}\n", what, m.seconds,
                           static_cast<double>(m.peak_extra) / 1e6,
                           static_cast<double>(m.peak_extra) / static_cast<double>(reference),
                           reference_name)
            << std::flush;
}

struct Options {
  std::string config = "configs/big.yaml";
  std::vector<std::string> overrides;
  std::string dir;
  int average = 20;
  bool plain_hdf5 = true;
};

void run(const Options& o) {
  const auto config = nmt::load_run_config(o.config, o.overrides);
  const fs::path dir = o.dir.empty()
                           ? fs::temp_directory_path() /
                                 fmt::format("checkpoint_memory_bench_{}", std::random_device{}())
                           : fs::path(o.dir);
  fs::create_directories(dir);
  struct Cleanup {
    fs::path dir;
    bool remove;
    ~Cleanup() {
      std::error_code ec;
      if (remove) fs::remove_all(dir, ec);
    }
  } cleanup{dir, o.dir.empty()};

  torch::NoGradGuard no_grad;
  std::int64_t params = 0, state = 0;
  const std::string path = (dir / "step-00001000.h5").string();
  {
    nmt::model::Transformer model(config.model);
    torch::optim::Adam adam(model->parameters());
    fill_adam_state(*model, adam);
    params = bytes_of(model->parameters());
    state = 3 * params;
    std::cout << nmt::bench::cpu_line() << '\n';
    std::cout << fmt::format(
        "{}: {} parameters; state with Adam's moments {:.1f} MB (parameters {:.1f} MB)\n", o.config,
        model->parameter_count(), state / 1e6, params / 1e6);
    std::cout << fmt::format("{:<34}{:>9}{:>14}{:>10}\n", "step", "wall s", "peak extra MB",
                             "ratio");
    nmt::checkpoint::TrainingState training;
    training.step = 1000;
    const auto save =
        measure([&] { nmt::checkpoint::save_checkpoint(path, *model, &adam, training, config); });
    print_row("save (streaming)", save, state, "state");
    std::cout << fmt::format("  file: {:.1f} MB\n", fs::file_size(path) / 1e6);
    if (o.plain_hdf5) {
      const std::string plain_path = (dir / "plain.h5").string();
      const auto plain = measure([&] { save_plain_hdf5(plain_path, *model, adam); });
      print_row("save (plain HDF5, default driver)", plain, state, "state");
      fs::remove(plain_path);
    }
    const auto load =
        measure([&] { nmt::checkpoint::load_checkpoint(path, *model, &adam, config); });
    print_row("load (into the same model, Adam)", load, state, "state");
  }
  std::vector<std::string> inputs;
  const fs::path copies = dir / "average";
  fs::create_directories(copies);
  for (int k = 0; k < o.average; ++k) {
    inputs.push_back((copies / fmt::format("step-{:08}.h5", k + 1)).string());
    fs::create_hard_link(path, inputs.back());
  }
  const std::string output = (dir / "averaged.h5").string();
  const auto average = measure([&] { nmt::checkpoint::average_checkpoints(inputs, output); });
  print_row(fmt::format("average of {} (streaming)", o.average), average, params, "parameters");
  std::cout << fmt::format("{:<34}{:>9}{:>14}{:>10.3f}  of the state\n", "", "", "",
                           static_cast<double>(average.peak_extra) / static_cast<double>(state));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Checkpoint save, load and averaging: wall time and peak memory against the state",
               "checkpoint_memory_bench"};
  Options o;
  app.add_option("--config", o.config, "Run config of the model")->capture_default_str();
  app.add_option("--set", o.overrides, "Override a config key, e.g. model.layers=2");
  app.add_option("--dir", o.dir, "Folder for the files (default: a temporary one, removed)");
  app.add_option("--average", o.average, "Copies to average")->capture_default_str();
  app.add_flag("!--no-plain-hdf5", o.plain_hdf5,
               "Skip the save by HDF5's default driver (the comparison)");
  return nmt::apps::run_bench(app, argc, argv, [&] {
    if (o.average < 1) throw nmt::UsageError("--average must be at least 1");
    run(o);
    return 0;
  });
}
