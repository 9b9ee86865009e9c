// The LibTorch runtime the trainer stands on: real tensor arithmetic, the BLAS backend (the
// reference BLAS is about 35x slower and must not be what the project runs on), device selection.

#include <ATen/Context.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/randn.h>
#include <ATen/ops/tensor.h>
#include <ATen/ops/zeros.h>
#include <torch/cuda.h>

#include <cmath>
#include <limits>
#include <regex>
#include <vector>

#include "test_utils.h"
#include "trainer/runtime/blas_backend.h"
#include "trainer/runtime/cuda_info.h"
#include "trainer/runtime/device.h"
#include "trainer/runtime/precision.h"

namespace nmt::runtime {
namespace {

TEST(Runtime, TensorMatmulAndAutogradAreReal) {
  const auto a = at::tensor({1.0f, 2.0f, 3.0f, 4.0f}).reshape({2, 2});
  const auto b = at::tensor({5.0f, 6.0f, 7.0f, 8.0f}).reshape({2, 2});
  const auto c = at::matmul(a, b);
  EXPECT_FLOAT_EQ(c[0][0].item<float>(), 19.0f);
  EXPECT_FLOAT_EQ(c[0][1].item<float>(), 22.0f);
  EXPECT_FLOAT_EQ(c[1][0].item<float>(), 43.0f);
  EXPECT_FLOAT_EQ(c[1][1].item<float>(), 50.0f);

  // d/dx sum(x * x) = 2x
  auto x = at::tensor({1.5f, -2.0f}).set_requires_grad(true);
  (x * x).sum().backward();
  EXPECT_FLOAT_EQ(x.grad()[0].item<float>(), 3.0f);
  EXPECT_FLOAT_EQ(x.grad()[1].item<float>(), -4.0f);
}

TEST(Runtime, BlasBackendIsOptimised) {
  const auto backend = detect_blas_backend();
  // Debian's LibTorch loads libblas.so.3 through the alternatives system; jobs/setup.sh installs
  // libopenblas0-pthread so it resolves to OpenBLAS.
  EXPECT_FALSE(backend.is_reference()) << "LibTorch runs on the reference BLAS (" << backend.library
                                       << "): install libopenblas0-pthread";
  EXPECT_NE(backend.name, "reference");
  // A statically linked MKL (PyPI's LibTorch) names the library that holds it (libtorch_cpu.so);
  // only an unrecognised statically linked BLAS shows none.
  if (backend.name != "unknown") {
    EXPECT_FALSE(backend.library.empty());
  }
}

TEST(Runtime, MatmulThroughputIsMeasured) {
  const double gflops = measure_matmul_gflops(256, 3);
  EXPECT_GT(gflops, 0.0);
  EXPECT_TRUE(std::isfinite(gflops));
}

TEST(Runtime, DeviceSelectionAtRunTime) {
  EXPECT_TRUE(select_device("cpu").is_cpu());
  EXPECT_EQ(select_device("auto").is_cuda(), torch::cuda::is_available());
  NMT_EXPECT_THROW_WITH(select_device("tpu"), std::invalid_argument, "unknown device 'tpu'");
  if (!torch::cuda::is_available()) {
    NMT_EXPECT_THROW_WITH(select_device("cuda"), std::invalid_argument, "CUDA is not available");
  }
}

// What CMake saw in this LibTorch (NMT_TORCH_HAS_CUDA, NMT_HAVE_C10D_NCCL) is what the running
// binary finds: a CUDA LibTorch whose CUDA library were dropped at link time would report no CUDA.
TEST(Runtime, CudaInfoMatchesTheLibTorchBuiltAgainst) {
  const auto info = cuda_info();
  EXPECT_EQ(info.built, NMT_EXPECT_CUDA_BUILD != 0);
  EXPECT_EQ(info.c10d_nccl, NMT_EXPECT_C10D_NCCL != 0);
  if (info.built) {
    EXPECT_TRUE(std::regex_match(info.runtime_version, std::regex("[0-9]+\\.[0-9]+")))
        << info.runtime_version;
  } else {
    EXPECT_EQ(info.runtime_version, "");
  }
  if (info.c10d_nccl) {
    EXPECT_TRUE(std::regex_match(info.nccl_version, std::regex("[0-9]+\\.[0-9]+\\.[0-9]+")))
        << info.nccl_version;
  } else {
    EXPECT_EQ(info.nccl_version, "");
  }
  ASSERT_EQ(info.devices.size(), torch::cuda::device_count());
  for (const auto& device : info.devices) {
    EXPECT_FALSE(device.name.empty());
    EXPECT_GT(device.memory_bytes, 0);
    EXPECT_GT(device.capability_major, 0);
  }
}

TEST(Runtime, OneGpuPerRank) {
  const auto cuda = [](int index) {
    return c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(index));
  };
  EXPECT_EQ(device_for_rank(0, 1), cuda(0));
  EXPECT_EQ(device_for_rank(3, 1), cuda(0)) << "one GPU visible per rank (srun --gpus-per-task=1)";
  EXPECT_EQ(device_for_rank(0, 8), cuda(0));
  EXPECT_EQ(device_for_rank(7, 8), cuda(7));
  NMT_EXPECT_THROW_WITH(device_for_rank(8, 8), std::invalid_argument, "local rank 8 has no GPU");
  NMT_EXPECT_THROW_WITH(device_for_rank(0, 0), std::invalid_argument, "no GPU is visible");
}

TEST(Runtime, Fp32OnCudaMultipliesInTf32) {
  auto& context = at::globalContext();
  const bool before = context.allowTF32CuBLAS();
  context.setAllowTF32CuBLAS(false);
  configure_cuda_matmuls("bf16");
  EXPECT_FALSE(context.allowTF32CuBLAS()) << "bf16 leaves fp32 products alone";
  configure_cuda_matmuls("fp32");
  EXPECT_TRUE(context.allowTF32CuBLAS());
  context.setAllowTF32CuBLAS(before);
}

TEST(Runtime, CudaDeviceSelection) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  EXPECT_TRUE(select_device("cuda:0").is_cuda());
  EXPECT_THROW(select_device("cuda:999"), std::invalid_argument);
}

// Gradients with requires_grad parameters, on `device`: {8, 16}, {24}, {-8} times `factor`.
std::vector<at::Tensor> parameters_with_gradients(c10::Device device, double factor = 1.0) {
  std::vector<at::Tensor> parameters;
  for (const auto& values : std::vector<std::vector<float>>{{8, 16}, {24}, {-8}}) {
    auto p =
        at::zeros({static_cast<std::int64_t>(values.size())}, at::TensorOptions().device(device))
            .set_requires_grad(true);
    p.mutable_grad() = at::tensor(values).to(device) * factor;
    parameters.push_back(p);
  }
  return parameters;
}

void check_loss_scaler(c10::Device device) {
  LossScaler scaler(true, 8.0, /*growth_interval=*/2);
  auto parameters = parameters_with_gradients(device);
  EXPECT_TRUE(scaler.unscale(parameters));
  EXPECT_EQ(scaler.host_reads(), 1) << "one read for all three gradients";
  EXPECT_TRUE(at::equal(parameters[0].grad().cpu(), at::tensor({1.0f, 2.0f}))) << "unscaled";
  EXPECT_TRUE(at::equal(parameters[2].grad().cpu(), at::tensor({-1.0f}))) << "unscaled";
  scaler.update(true);
  EXPECT_EQ(scaler.scale(), 8.0);
  scaler.update(true);
  EXPECT_EQ(scaler.scale(), 16.0) << "doubled after growth_interval clean steps";

  for (const double bad : {std::numeric_limits<double>::infinity(), std::nan("")}) {
    auto overflowed = parameters_with_gradients(device);
    overflowed[1].mutable_grad().fill_(bad);
    EXPECT_FALSE(scaler.unscale(overflowed)) << bad;
    const double before = scaler.scale();
    scaler.update(false);
    EXPECT_EQ(scaler.scale(), before / 2) << "halved after an overflow";
  }
  EXPECT_EQ(scaler.host_reads(), 3);
  scaler.update(true);
  EXPECT_EQ(scaler.scale(), 4.0) << "an overflow restarts the count of clean steps";
}

TEST(LossScaler, UnscalesWithOneHostReadHalvesOnOverflowGrowsWhenClean) {
  check_loss_scaler(c10::Device(c10::kCPU));
  LossScaler off(false);
  auto parameters = parameters_with_gradients(c10::Device(c10::kCPU));
  EXPECT_EQ(off.scale(), 1.0);
  EXPECT_TRUE(off.unscale(parameters));
  EXPECT_EQ(off.host_reads(), 0);
  EXPECT_TRUE(at::equal(parameters[0].grad(), at::tensor({8.0f, 16.0f}))) << "untouched";
}

TEST(LossScaler, FusedCheckOnCuda) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  check_loss_scaler(c10::Device(c10::kCUDA, 0));
}

// The autocast API whose names changed in LibTorch 2.4 (precision.cpp): on a GPU, a matrix product
// inside a bf16 or fp16 scope comes out in that type, and in fp32 again once the scope ends.
TEST(Runtime, CudaAutocastScopeSetsTheMatmulType) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  const auto a = at::randn({8, 8}, at::TensorOptions().device(c10::Device(c10::kCUDA, 0)));
  for (const auto& [precision, type] :
       {std::pair{"bf16", at::kBFloat16}, std::pair{"fp16", at::kHalf}}) {
    {
      AutocastScope scope(precision);
      EXPECT_EQ(at::matmul(a, a).scalar_type(), type) << precision;
    }
    EXPECT_EQ(at::matmul(a, a).scalar_type(), at::kFloat) << "after the " << precision << " scope";
  }
}

}  // namespace
}  // namespace nmt::runtime
