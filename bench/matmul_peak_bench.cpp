// The machine's matrix-multiply peak through LibTorch, the denominator of every model-FLOPs
// utilization figure the trainer benchmarks report.
//
//   build/bench/matmul_peak_bench [benchmark flags]
//       fp32 GFLOP/s on the CPU per size and thread count, and the BLAS backend it ran on
//   build/bench/matmul_peak_bench --peak [--device cuda] [--precision bf16] [--size N] [--json]
//       one device's peak in one precision (fp32 is TF32 on CUDA), as text or one JSON line for
//       scripts (jobs/gpu-check.sh)

#include <ATen/Parallel.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/randn.h>
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <iostream>

#include "apps/tool_main.h"
#include "bench/bench_device.h"
#include "bench/matmul_peak.h"
#include "common/cli.h"
#include "trainer/runtime/blas_backend.h"
#include "trainer/runtime/device.h"

namespace {

void BM_Matmul(benchmark::State& state) {
  const auto n = state.range(0);
  at::set_num_threads(static_cast<int>(state.range(1)));
  const auto a = at::randn({n, n});
  const auto b = at::randn({n, n});
  for (auto _ : state) {
    auto c = at::matmul(a, b);
    benchmark::DoNotOptimize(c.data_ptr());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * static_cast<double>(n * n * n) * static_cast<double>(state.iterations()) / 1e9,
      benchmark::Counter::kIsRate);
}

// --peak: one figure for one device and precision.
int run_peak(int argc, char** argv) {
  CLI::App app{"The matrix-multiply peak of one device in one precision", "matmul_peak_bench"};
  bool peak = false, json = false;
  nmt::bench::DeviceFlags device_flags;
  std::string precision_name = "fp32";
  std::int64_t size = 0;
  int rounds = 5;
  app.add_flag("--peak", peak, "Measure one peak instead of the CPU benchmark table");
  app.add_option("--device", device_flags.device, "cpu, cuda or cuda:N")->capture_default_str();
  app.add_option("--precision", precision_name, "fp32 (TF32 on CUDA), bf16 or fp16")
      ->capture_default_str();
  app.add_option("--size", size, "Square matrix size (0: 8192 on CUDA, 2048 on a CPU)");
  app.add_option("--rounds", rounds, "Timed rounds; the best counts")->capture_default_str();
  app.add_option("--threads", device_flags.threads, "CPU threads (0: all cores)")
      ->capture_default_str();
  app.add_flag("--json", json, "Print one JSON object");
  return nmt::apps::run_bench(app, argc, argv, [&] {
    const auto device = nmt::bench::select_device(device_flags);
    if (size <= 0) size = device.is_cuda() ? 8192 : 2048;
    const auto precision = nmt::runtime::parse_precision(precision_name);
    const auto peak_figure = nmt::bench::measure_matmul_peak(device, precision, size, rounds);
    if (json) {
      const nlohmann::json out = {{"device", device.str()},
                                  {"precision", nmt::runtime::precision_name(precision)},
                                  {"math", peak_figure.math},
                                  {"n", peak_figure.n},
                                  {"tflops", peak_figure.flops_per_second / 1e12},
                                  {"cpu", nmt::bench::cpu_line()}};
      std::cout << out.dump() << '\n';
    } else {
      std::cout << nmt::bench::cpu_line() << '\n';
      std::cout << fmt::format("matmul peak on {} ({} {}^3): {:.2f} TFLOP/s\n", device.str(),
                               peak_figure.math, peak_figure.n,
                               peak_figure.flops_per_second / 1e12);
    }
    return 0;
  });
}

}  // namespace

BENCHMARK(BM_Matmul)
    ->ArgsProduct({{256, 512, 1024, 2048}, {1, 2}})
    ->ArgNames({"n", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--peak") == 0) return run_peak(argc, argv);
  }
  const auto backend = nmt::runtime::detect_blas_backend();
  benchmark::AddCustomContext("blas", backend.name + " " + backend.library);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
