// Training throughput and model-FLOPs utilization (MFU) on one device in one precision. Measures
// the matrix-multiply peak of that device and precision first (bench/matmul_peak.h: bf16, fp16,
// or fp32, which is TF32 on CUDA), then times full training steps of the paper's base model and of
// the Multi30k configs on synthetic batches, as the trainer's update runs them: the forward pass
// and label-smoothed loss under the precision's autocast, backward, the division of the gradients
// by the target tokens (the loss scaler's pass), and the fused Adam step. No data loading, no
// clipping. Prints tokens/s (source + target), achieved model FLOP/s over that peak, and the peak
// device memory.
//
//   build/bench/train_throughput_bench [--configs base.yaml,...] [--tokens N] [--steps K]
//       [--device cuda] [--precision bf16] [--set model.layers=2 ...] [--json FILE]
//
// The peak memory is the process's high-water mark, so with several configs in one run each
// config's figure includes the ones before it; jobs/gpu-check.sh runs one config per process.

#include <ATen/ops/randint.h>
#include <fmt/format.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <iostream>

#include "apps/tool_main.h"
#include "bench/bench_device.h"
#include "bench/matmul_peak.h"
#include "common/cli.h"
#include "trainer/config/train_config.h"
#include "trainer/model/flops.h"
#include "trainer/model/transformer.h"
#include "trainer/optim/fused_adam.h"
#include "trainer/runtime/blas_backend.h"
#include "trainer/runtime/cuda_info.h"
#include "trainer/runtime/device.h"
#include "trainer/train/batch_loss.h"

namespace {

struct Options {
  std::vector<std::string> configs;
  std::vector<std::string> overrides;  // --set key=value, applied to every config
  std::int64_t tokens = 4096;          // padded source (and target) tokens per batch
  std::int64_t length = 24;  // sentence length in tokens (Multi30k averages ~14 + BOS/EOS)
  int steps = 3;
  int warmup = 1;
  nmt::bench::DeviceFlags device;
  std::string precision = "fp32";
  std::int64_t peak_size = 0;  // 0: 8192 on CUDA, 2048 on a CPU
  std::string json;
  std::string profile;  // a Chrome trace of the timed steps
};

struct Measurement {
  std::int64_t rows = 0;
  double seconds_per_step = 0, tokens_per_second = 0, model_flops_per_second = 0;
  bool fused_adam = false;
};

Measurement time_training(const nmt::RunConfig& config, const Options& o, const c10::Device& device,
                          nmt::runtime::Precision precision) {
  nmt::model::Transformer model(config.model);
  model->to(device);
  model->train();
  const auto parameters = model->parameters();
  nmt::optim::FusedAdam adam(parameters, nmt::optim::AdamSettings{});
  nmt::runtime::LossScaler scaler(precision == nmt::runtime::Precision::kFp16);
  const std::int64_t rows = std::max<std::int64_t>(1, o.tokens / o.length);
  const auto vocab = config.model.vocab_size;
  const auto ids = at::TensorOptions().dtype(at::kLong).device(device);
  const auto src = at::randint(4, vocab, {rows, o.length}, ids);  // [rows, length]
  const auto tgt_in = at::randint(4, vocab, {rows, o.length}, ids);
  const auto tgt_out = at::randint(4, vocab, {rows, o.length}, ids);
  const auto target_tokens = static_cast<double>(rows * o.length);
  const auto step = [&] {
    adam.zero_grad();
    nmt::optim::LossTerms terms;
    {
      nmt::runtime::AutocastScope autocast(precision, device);
      terms = nmt::train::batch_loss(model, src, tgt_in, tgt_out, 0.1, precision);
    }
    (terms.smoothed * scaler.scale()).backward();
    const bool finite = scaler.unscale(parameters, target_tokens);
    if (finite) adam.step(1e-4);
    scaler.update(finite);
  };
  for (int i = 0; i < std::max(o.warmup, 1); ++i) step();  // allocations, kernels, thread pools
  nmt::bench::synchronize(device);
  const auto start = std::chrono::steady_clock::now();
  {
    std::unique_ptr<torch::autograd::profiler::RecordProfile> trace;
    if (!o.profile.empty()) {
      trace = std::make_unique<torch::autograd::profiler::RecordProfile>(o.profile);
    }
    for (int i = 0; i < o.steps; ++i) step();
  }
  nmt::bench::synchronize(device);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / o.steps;
  const double flops = nmt::model::training_flops(config.model, rows, o.length, o.length);
  return {rows, seconds, 2.0 * static_cast<double>(rows * o.length) / seconds, flops / seconds,
          adam.fused()};
}

void write_json(const std::string& path, const nlohmann::json& out) {
  std::ofstream file(path);
  file << out.dump(2) << '\n';
  if (!file) throw std::runtime_error("cannot write " + path);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Training tokens/s and model-FLOPs utilization against the measured matmul peak",
               "train_throughput_bench"};
  Options o;
  o.configs = {"configs/base.yaml", "configs/multi30k.yaml", "configs/multi30k-quick.yaml"};
  app.add_option("--configs", o.configs, "Run configs to time")->delimiter(',');
  app.add_option("--set", o.overrides, "Override a key of every config, e.g. model.layers=2");
  app.add_option("--tokens", o.tokens, "Padded tokens per side per batch")->capture_default_str();
  app.add_option("--length", o.length, "Tokens per sentence")->capture_default_str();
  app.add_option("--steps", o.steps, "Timed steps per config")->capture_default_str();
  app.add_option("--warmup", o.warmup, "Untimed steps first (at least 1)")->capture_default_str();
  nmt::bench::add_device_flags(app, o.device);
  app.add_option("--precision", o.precision, "fp32 (TF32 on CUDA), bf16 or fp16")
      ->capture_default_str();
  app.add_option("--peak-size", o.peak_size, "Matrix size of the peak (0: 8192 CUDA, 2048 CPU)");
  app.add_option("--json", o.json, "Also write the figures to this JSON file");
  app.add_option("--profile", o.profile,
                 "Write a Chrome trace (chrome://tracing) of the timed steps to this file, with "
                 "one config (profiling slows the steps)");
  return nmt::apps::run_bench(app, argc, argv, [&] {
    if (o.steps < 1 || o.tokens < o.length || o.length < 2) {
      throw std::invalid_argument("need --steps >= 1, --length >= 2 and --tokens >= --length");
    }
    const auto device = nmt::bench::select_device(o.device);
    const auto precision =
        nmt::runtime::resolve_precision(nmt::runtime::parse_precision(o.precision), device)
            .precision;
    const std::int64_t peak_size = o.peak_size > 0 ? o.peak_size : device.is_cuda() ? 8192 : 2048;
    const auto peak = nmt::bench::measure_matmul_peak(device, precision, peak_size);
    const auto where = device.is_cuda() ? nmt::runtime::describe_device(device)
                                        : nmt::runtime::detect_blas_backend().name;
    std::cout << nmt::bench::cpu_line() << '\n';
    std::cout << fmt::format("matmul peak ({} {}^3, {}): {:.1f} GFLOP/s\n", peak.math, peak.n,
                             where, peak.flops_per_second / 1e9);
    std::cout << fmt::format("{:<30}{:>12}{:>12}{:>12}{:>14}{:>8}{:>10}\n", "config", "params",
                             "s/step", "tokens/s", "model GF/s", "MFU", "peak GiB");
    nlohmann::json results = nlohmann::json::array();
    for (const auto& path : o.configs) {
      const auto config = nmt::load_run_config(path, o.overrides);
      nmt::model::Transformer probe(config.model);
      const auto params = probe->parameter_count();
      const auto m = time_training(config, o, device, precision);
      const auto memory =
          device.is_cuda() ? nmt::runtime::cuda_peak_memory_bytes(device.index()) : std::int64_t{0};
      const double mfu = m.model_flops_per_second / peak.flops_per_second;
      std::cout << fmt::format("{:<30}{:>12}{:>12.3f}{:>12.0f}{:>14.1f}{:>7.1f}%{:>10.2f}\n", path,
                               params, m.seconds_per_step, m.tokens_per_second,
                               m.model_flops_per_second / 1e9, 100.0 * mfu,
                               static_cast<double>(memory) / (1 << 30));
      results.push_back({{"config", path},
                         {"parameters", params},
                         {"tokens_per_side", m.rows * o.length},
                         {"sentences", m.rows},
                         {"length", o.length},
                         {"seconds_per_step", m.seconds_per_step},
                         {"tokens_per_second", m.tokens_per_second},
                         {"model_tflops", m.model_flops_per_second / 1e12},
                         {"mfu", mfu},
                         {"peak_memory_bytes", memory},
                         {"fused_adam", m.fused_adam}});
    }
    if (!o.json.empty()) {
      write_json(
          o.json,
          {{"device", device.str()},
           {"cpu", nmt::bench::cpu_line()},
           {"precision", nmt::runtime::precision_name(precision)},
           {"steps", o.steps},
           {"peak", {{"math", peak.math}, {"n", peak.n}, {"tflops", peak.flops_per_second / 1e12}}},
           {"results", results}});
    }
    return 0;
  });
}
