// Training throughput and model-FLOPs utilization (MFU) on this machine. Measures the fp32
// matrix-multiply peak first (same threads, same run), then times full training steps (forward,
// backward, Adam) of the paper's base model and of the Multi30k configs on synthetic batches,
// and prints tokens/s and achieved model FLOP/s over that peak.
//
//   build/bench/train_throughput_bench [--configs base.yaml,...] [--tokens N] [--steps K]

#include <ATen/ops/randint.h>
#include <fmt/format.h>
#include <torch/optim/adam.h>

#include <chrono>
#include <iostream>

#include "common/cli.h"
#include "preprocess/vocabulary.h"
#include "trainer/model/flops.h"
#include "trainer/model/transformer.h"
#include "trainer/optim/label_smoothing.h"
#include "trainer/runtime/blas_backend.h"
#include "trainer/train_config.h"

namespace {

struct Options {
  std::vector<std::string> configs;
  std::int64_t tokens = 4096;  // padded source (and target) tokens per batch
  std::int64_t length = 24;    // sentence length in tokens (Multi30k averages ~14 + BOS/EOS)
  int steps = 3;
  int threads = 0;
};

struct Measurement {
  double seconds_per_step, tokens_per_second, model_flops_per_second;
};

Measurement time_training(const nmt::RunConfig& config, const Options& o) {
  nmt::model::Transformer model(config.model);
  torch::optim::Adam adam(model->parameters(),
                          torch::optim::AdamOptions(1e-4).betas({0.9, 0.98}).eps(1e-9));
  const std::int64_t rows = std::max<std::int64_t>(1, o.tokens / o.length);
  const auto vocab = config.model.vocab_size;
  const auto src = at::randint(4, vocab, {rows, o.length}, at::kLong);  // [rows, length]
  const auto tgt_in = at::randint(4, vocab, {rows, o.length}, at::kLong);
  const auto tgt_out = at::randint(4, vocab, {rows, o.length}, at::kLong);
  const auto step = [&] {
    adam.zero_grad();
    const auto logits = model->forward(src, tgt_in);
    nmt::optim::label_smoothed_loss(logits.reshape({-1, vocab}), tgt_out.reshape({-1}), 0.1,
                                    nmt::preprocess::kPadId)
        .smoothed.backward();
    adam.step();
  };
  step();  // warm-up: allocations, thread pools
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < o.steps; ++i) step();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / o.steps;
  const double flops = nmt::model::training_flops(config.model, rows, o.length, o.length);
  return {seconds, 2.0 * static_cast<double>(rows * o.length) / seconds, flops / seconds};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Training tokens/s and model-FLOPs utilization against the measured matmul peak",
               "train_throughput_bench"};
  Options o;
  o.configs = {"configs/base.yaml", "configs/multi30k.yaml", "configs/multi30k-quick.yaml"};
  nmt::LogOptions log;
  log.tool = "train_throughput_bench";
  log.level = "warn";
  app.add_option("--configs", o.configs, "Run configs to time")->delimiter(',');
  app.add_option("--tokens", o.tokens, "Padded tokens per side per batch")->capture_default_str();
  app.add_option("--length", o.length, "Tokens per sentence")->capture_default_str();
  app.add_option("--steps", o.steps, "Timed steps per config")->capture_default_str();
  app.add_option("--threads", o.threads, "CPU threads (0: all cores)")->capture_default_str();
  nmt::add_logging_flags(app, log);
  return nmt::run_tool(app, log, argc, argv, [&] {
    nmt::runtime::configure_cpu_threads(o.threads);
    const double peak = 1e9 * nmt::runtime::measure_matmul_gflops(2048, 5);
    std::cout << fmt::format("matmul peak (fp32 2048^3, {}): {:.1f} GFLOP/s\n",
                             nmt::runtime::detect_blas_backend().name, peak / 1e9);
    std::cout << fmt::format("{:<30}{:>12}{:>12}{:>12}{:>14}{:>8}\n", "config", "params", "s/step",
                             "tokens/s", "model GF/s", "MFU");
    for (const auto& path : o.configs) {
      auto config = nmt::load_run_config(path);
      if (path.find("base") != std::string::npos) config.model.vocab_size = 37000;
      nmt::model::Transformer probe(config.model);
      const auto params = probe->parameter_count();
      const auto m = time_training(config, o);
      std::cout << fmt::format("{:<30}{:>12}{:>12.3f}{:>12.0f}{:>14.1f}{:>7.1f}%\n", path, params,
                               m.seconds_per_step, m.tokens_per_second,
                               m.model_flops_per_second / 1e9,
                               100.0 * m.model_flops_per_second / peak);
    }
    return 0;
  });
}
