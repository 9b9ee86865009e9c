// The machine's matrix-multiply peak through LibTorch, the denominator of every model-FLOPs
// utilization figure the trainer benchmarks report. Prints GFLOP/s per size and thread count,
// and the BLAS backend it ran on.

#include <ATen/Parallel.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/randn.h>
#include <benchmark/benchmark.h>

#include "trainer/runtime/blas_backend.h"

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

}  // namespace

BENCHMARK(BM_Matmul)
    ->ArgsProduct({{256, 512, 1024, 2048}, {1, 2}})
    ->ArgNames({"n", "threads"})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  const auto backend = nmt::runtime::detect_blas_backend();
  benchmark::AddCustomContext("blas", backend.name + " " + backend.library);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
