#pragma once
// The matrix-multiply peak of one device in one precision, the denominator of the model-FLOPs
// utilization (MFU) figures: square products of the dtype the precision's autocast runs its matrix
// products in (bf16, fp16), or fp32, which on CUDA runs on the tensor cores in TF32 once
// configure_cuda_matmuls(kFp32) has allowed it, as the trainer does. Used by matmul_peak_bench and
// train_throughput_bench, so that an MFU figure and its peak come from the same process.

#include <ATen/ops/matmul.h>
#include <ATen/ops/randn.h>
#include <torch/cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "trainer/runtime/precision.h"

namespace nmt::bench {

struct MatmulPeak {
  double flops_per_second = 0.0;  // best timed round
  std::int64_t n = 0;             // the products were n x n times n x n
  std::string math;               // what the products ran in: "fp32", "tf32", "bf16", "fp16"
};

// The dtype `precision`'s matrix products run in; TF32 is fp32 storage.
inline c10::ScalarType matmul_dtype(runtime::Precision precision) {
  switch (precision) {
    case runtime::Precision::kBf16:
      return c10::kBFloat16;
    case runtime::Precision::kFp16:
      return c10::kHalf;
    case runtime::Precision::kFp32:
      return c10::kFloat;
    case runtime::Precision::kAuto:
    case runtime::Precision::kInt8:
      break;
  }
  throw std::invalid_argument("matmul peak: a resolved floating-point precision, not " +
                              std::string(runtime::precision_name(precision)));
}

inline void synchronize(const c10::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize(device.index());
}

// Best of `rounds` timed rounds, each of enough back-to-back products to fill the device's queue
// (one on a CPU, where a product of n = 2048 already takes about 0.1 s; 20 on a GPU, where one of
// n = 8192 takes about a millisecond), after one untimed warm-up round (cuBLAS handles, kernel
// selection, thread pools).
inline MatmulPeak measure_matmul_peak(const c10::Device& device, runtime::Precision precision,
                                      std::int64_t n, int rounds = 5) {
  const auto choice = runtime::resolve_precision(precision, device);  // throws when unsupported
  if (device.is_cuda()) runtime::configure_cuda_matmuls(choice.precision);
  const auto options = at::TensorOptions().device(device).dtype(matmul_dtype(choice.precision));
  const auto a = at::randn({n, n}, at::TensorOptions().device(device)).to(options);  // [n, n]
  const auto b = at::randn({n, n}, at::TensorOptions().device(device)).to(options);  // [n, n]
  const int per_round = device.is_cuda() ? 20 : 1;
  const auto round = [&] {
    synchronize(device);
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < per_round; ++i) (void)at::matmul(a, b);
    synchronize(device);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  round();
  double best = 0.0;
  for (int r = 0; r < std::max(rounds, 1); ++r) {
    const double seconds = round();
    best = std::max(best, 2.0 * static_cast<double>(n * n * n) * per_round / seconds);
  }
  const bool tf32 = device.is_cuda() && choice.precision == runtime::Precision::kFp32;
  return {best, n, tf32 ? "tf32" : runtime::precision_name(choice.precision)};
}

}  // namespace nmt::bench
