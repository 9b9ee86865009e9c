// Training-mode dropout, forward and backward, with LibTorch's CPU dropout and with ours
// (trainer/model/dropout.h) side by side in one run, on activations shaped like a training batch
// of configs/multi30k.yaml: time per call and the ratio.
//
//   build/bench/dropout_bench [--rows 4096] [--width 128] [--p 0.3] [--calls 200] [--threads N]

#include <ATen/Parallel.h>
#include <ATen/ops/randn.h>
#include <fmt/format.h>
#include <torch/autograd.h>
#include <torch/nn/modules/dropout.h>

#include <chrono>
#include <functional>
#include <iostream>

#include "bench/bench_device.h"
#include "common/cli.h"
#include "trainer/model/dropout.h"

namespace {

// Seconds per forward + backward of `dropout` on x.
double time_calls(const std::function<torch::Tensor(const torch::Tensor&)>& dropout,
                  const torch::Tensor& x, int calls) {
  const auto grad = torch::ones_like(x);
  for (int i = 0; i < 5; ++i) torch::autograd::grad({dropout(x)}, {x}, {grad});  // warm-up
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; ++i) torch::autograd::grad({dropout(x)}, {x}, {grad});
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / calls;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"LibTorch's CPU dropout against the parallel counter-based mask", "dropout_bench"};
  std::int64_t rows = 4096, width = 128;
  double p = 0.3;
  int calls = 200, threads = 0;
  app.add_option("--rows", rows, "Tokens in the batch (rows of the activation)");
  app.add_option("--width", width, "d_model (columns)");
  app.add_option("--p", p, "Dropout probability");
  app.add_option("--calls", calls, "Timed calls per variant and type");
  app.add_option("--threads", threads, "CPU threads (0: LibTorch's default)");
  CLI11_PARSE(app, argc, argv);
  if (threads > 0) at::set_num_threads(threads);
  std::cout << nmt::bench::cpu_line() << '\n';
  torch::nn::Dropout reference(p);
  nmt::model::Dropout ours(p);
  fmt::print("dropout p={} on [{}, {}], {} threads, forward + backward per call\n", p, rows, width,
             at::get_num_threads());
  fmt::print("{:<6} {:>14} {:>14} {:>8}\n", "dtype", "libtorch ms", "parallel ms", "speedup");
  for (auto dtype : {torch::kFloat, torch::kBFloat16}) {
    const auto x = torch::randn({rows, width}).to(dtype).requires_grad_(true);
    const double base =
        time_calls([&](const torch::Tensor& t) { return reference->forward(t); }, x, calls);
    const double mine =
        time_calls([&](const torch::Tensor& t) { return ours->forward(t); }, x, calls);
    fmt::print("{:<6} {:>14.3f} {:>14.3f} {:>7.2f}x\n", dtype == torch::kFloat ? "fp32" : "bf16",
               base * 1e3, mine * 1e3, base / mine);
  }
  return 0;
}
