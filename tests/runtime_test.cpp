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
#include <stdexcept>
#include <string>
#include <vector>

#include "test_utils.h"
#include "trainer/runtime/blas_backend.h"
#include "trainer/runtime/cpu_kernels.h"
#include "trainer/runtime/cuda_info.h"
#include "trainer/runtime/device.h"
#include "trainer/runtime/packed_gemm.h"
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

TEST(Runtime, Fp32OnCudaMultipliesInTf32) {
  auto& context = at::globalContext();
  const bool before = context.allowTF32CuBLAS();
  context.setAllowTF32CuBLAS(false);
  configure_cuda_matmuls(Precision::kBf16);
  EXPECT_FALSE(context.allowTF32CuBLAS()) << "bf16 leaves fp32 products alone";
  configure_cuda_matmuls(Precision::kFp32);
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
  EXPECT_TRUE(off.unscale(parameters, 8.0)) << "bf16/fp32: only the division by the tokens";
  EXPECT_EQ(off.host_reads(), 0);
  EXPECT_TRUE(at::equal(parameters[1].grad(), at::tensor({3.0f})));
}

TEST(LossScaler, DividesByScaleAndTokensInOnePass) {
  LossScaler scaler(true, 4.0);
  auto parameters = parameters_with_gradients(c10::Device(c10::kCPU));
  EXPECT_TRUE(scaler.unscale(parameters, 2.0));
  EXPECT_EQ(scaler.host_reads(), 1);
  EXPECT_TRUE(at::equal(parameters[0].grad(), at::tensor({1.0f, 2.0f})));
  EXPECT_TRUE(at::equal(parameters[2].grad(), at::tensor({-1.0f})));
}

TEST(LossScaler, FusedCheckOnCuda) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  check_loss_scaler(c10::Device(c10::kCUDA, 0));
}

// The autocast API whose names changed in LibTorch 2.4 (precision.cpp): a matrix product inside
// a bf16 or fp16 scope comes out in that type, and in fp32 again once the scope ends.
void check_autocast(const c10::Device& device, const std::vector<Precision>& precisions) {
  const auto a = at::randn({8, 8}, at::TensorOptions().device(device));
  for (const auto precision : precisions) {
    const auto type = precision == Precision::kBf16 ? at::kBFloat16 : at::kHalf;
    {
      AutocastScope scope(precision, device);
      EXPECT_EQ(at::matmul(a, a).scalar_type(), type) << precision_name(precision);
      {
        AutocastScope fp32(Precision::kFp32, device);  // a no-op scope inside leaves it on
        EXPECT_EQ(at::matmul(a, a).scalar_type(), type);
      }
      { AutocastScope nested(precision, device); }
      EXPECT_EQ(at::matmul(a, a).scalar_type(), type) << "a nested scope restores, not disables";
    }
    EXPECT_EQ(at::matmul(a, a).scalar_type(), at::kFloat)
        << "after the " << precision_name(precision) << " scope";
  }
}

TEST(Runtime, CpuAutocastScopeSetsTheMatmulType) {
  check_autocast(c10::Device(c10::kCPU), {Precision::kBf16});
}

TEST(Runtime, CudaAutocastScopeSetsTheMatmulType) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  check_autocast(c10::Device(c10::kCUDA, 0), {Precision::kBf16, Precision::kFp16});
}

TEST(Precision, ParsedOnceWithTheChoicesInTheError) {
  EXPECT_EQ(parse_precision("auto"), Precision::kAuto);
  EXPECT_EQ(parse_precision("bf16"), Precision::kBf16);
  for (const auto p : {Precision::kAuto, Precision::kFp32, Precision::kBf16, Precision::kFp16}) {
    EXPECT_EQ(parse_precision(precision_name(p)), p);
  }
  NMT_EXPECT_THROW_WITH(parse_precision("BF16"), std::invalid_argument, "unknown precision 'BF16'",
                        "expected auto, fp32, bf16, fp16");
}

TEST(Precision, AutoOnACpuFollowsItsInstructionsAndOnlyAvx512IsTimed) {
  // AMX-BF16 is bf16 whatever a timing would say (a loaded machine once timed it below 1.5x).
  EXPECT_EQ(choose_cpu_precision(CpuBf16::kAmx, {}).precision, Precision::kBf16);
  EXPECT_EQ(choose_cpu_precision(CpuBf16::kAmx, {100.0, 30.0}).precision, Precision::kBf16);
  EXPECT_NE(choose_cpu_precision(CpuBf16::kAmx, {}).reason.find("AMX-BF16"), std::string::npos);
  // AVX512-BF16 alone follows the measured speedup; emulated bf16 is slower than fp32.
  EXPECT_EQ(choose_cpu_precision(CpuBf16::kAvx512, {100.0, 500.0}).precision, Precision::kBf16);
  EXPECT_EQ(choose_cpu_precision(CpuBf16::kAvx512, {100.0, 120.0}).precision, Precision::kFp32)
      << "too little";
  EXPECT_EQ(choose_cpu_precision(CpuBf16::kAvx512, {100.0, 30.0}).precision, Precision::kFp32);
  EXPECT_EQ(choose_cpu_precision(CpuBf16::kAvx512, {0.0, 0.0}).precision, Precision::kFp32);
  EXPECT_EQ(choose_cpu_precision(CpuBf16::kNone, {100.0, 500.0}).precision, Precision::kFp32)
      << "without the instructions, whatever a probe said";
  EXPECT_NE(choose_cpu_precision(CpuBf16::kNone, {}).reason.find("no AMX-BF16 or AVX512-BF16"),
            std::string::npos);
  const auto why = choose_cpu_precision(CpuBf16::kAvx512, {100.0, 500.0}).reason;
  EXPECT_NE(why.find("500 GFLOP/s"), std::string::npos) << why;
  EXPECT_NE(why.find("5.00x"), std::string::npos) << why;

  const auto probe = probe_cpu_bf16(128, 2);
  EXPECT_GT(probe.fp32_gflops, 0.0);
  EXPECT_GT(probe.bf16_gflops, 0.0);
  const auto cpu = c10::Device(c10::kCPU);
  const auto chosen = resolve_precision(Precision::kAuto, cpu);
  EXPECT_NE(chosen.precision, Precision::kAuto);
  EXPECT_NE(chosen.precision, Precision::kFp16);
  const auto instructions = cpu_bf16_instructions();
  if (instructions == CpuBf16::kNone) {
    EXPECT_EQ(chosen.precision, Precision::kFp32);
  }
  if (instructions == CpuBf16::kAmx) {
    EXPECT_EQ(chosen.precision, Precision::kBf16);
  }
  EXPECT_EQ(chosen.reason.rfind("auto: ", 0), 0u) << chosen.reason;
}

const KernelPath& path_of(const std::vector<KernelPath>& paths, const std::string& operation) {
  for (const auto& path : paths) {
    if (path.operation == operation) return path;
  }
  throw std::runtime_error("no kernel path for " + operation);
}

TEST(CpuKernels, PathsFollowTheInstructionSetsNotTheVendor) {
  CpuInstructions zen3;  // AVX2 and FMA only
  zen3.avx2 = zen3.fma = true;
  CpuInstructions zen4 = zen3;  // AVX512 with BF16 and VNNI, no AMX
  zen4.avx512 = zen4.avx512_bf16 = zen4.avx512_vnni = true;
  CpuInstructions xeon = zen4;  // and AMX
  xeon.amx_bf16 = xeon.amx_int8 = true;

  const auto on_zen3 = choose_kernel_paths(zen3, "AVX2", "mkl", true, "fbgemm");
  ASSERT_EQ(on_zen3.size(), 5u);
  EXPECT_EQ(path_of(on_zen3, "fp32 decoding").path, "mkl packed weights");
  EXPECT_EQ(path_of(on_zen3, "bf16 matmul").path, "none");
  EXPECT_NE(path_of(on_zen3, "bf16 matmul").reason.find("fp32"), std::string::npos);
  EXPECT_EQ(path_of(on_zen3, "int8 matmul").path, "fbgemm");
  EXPECT_NE(path_of(on_zen3, "int8 matmul").reason.find("no VNNI"), std::string::npos);
  EXPECT_EQ(path_of(on_zen3, "fp32 matmul").path, "mkl");

  const auto on_zen4 = choose_kernel_paths(zen4, "AVX512", "mkl", true, "fbgemm");
  EXPECT_EQ(path_of(on_zen4, "bf16 matmul").path, "oneDNN AVX512-BF16");
  EXPECT_EQ(path_of(on_zen4, "int8 matmul").path, "fbgemm AVX512-VNNI");
  EXPECT_EQ(path_of(on_zen4, "vector kernels").path, "AVX512");

  const auto on_xeon = choose_kernel_paths(xeon, "AVX512", "mkl", true, "x86");
  EXPECT_EQ(path_of(on_xeon, "bf16 matmul").path, "oneDNN AMX");
  EXPECT_EQ(path_of(on_xeon, "int8 matmul").path, "x86 AMX-INT8");

  EXPECT_EQ(
      path_of(choose_kernel_paths(zen3, "AVX2", "reference", false, "fbgemm"), "fp32 matmul").path,
      "reference BLAS");
  const auto on_openblas = choose_kernel_paths(zen3, "", "openblas", false, "onednn");
  EXPECT_EQ(path_of(on_openblas, "vector kernels").path, "unknown");
  EXPECT_EQ(path_of(on_openblas, "fp32 decoding").path, "plain products");

  // This machine: the same instruction sets as the precision's choice, a path for every kind.
  const auto here = cpu_kernels();
  EXPECT_EQ(here.bf16_native, cpu_bf16_instructions() != CpuBf16::kNone);
  EXPECT_EQ(path_of(here.paths, "fp32 matmul").path == "reference BLAS",
            detect_blas_backend().is_reference());
  EXPECT_EQ(path_of(here.paths, "fp32 decoding").path != "plain products",
            PackedWeight::available());
  for (const auto& path : here.paths) {
    EXPECT_FALSE(path.path.empty()) << path.operation;
    EXPECT_FALSE(path.reason.empty()) << path.operation;
    EXPECT_NE(here.summary().find(path.operation + " " + path.path), std::string::npos);
  }
  EXPECT_EQ(here.summary().rfind(here.cpu.empty() ? "unknown CPU" : here.cpu, 0), 0u);
}

TEST(Precision, ExplicitChoicesAreCheckedAgainstTheDevice) {
  const auto cpu = c10::Device(c10::kCPU);
  EXPECT_EQ(resolve_precision(Precision::kFp32, cpu).precision, Precision::kFp32);
  EXPECT_EQ(resolve_precision(Precision::kBf16, cpu).precision, Precision::kBf16);
  NMT_EXPECT_THROW_WITH(resolve_precision(Precision::kFp16, cpu), std::invalid_argument,
                        "fp16 needs a CUDA device", "use bf16, fp32 or auto");
  EXPECT_THROW(AutocastScope(Precision::kAuto, cpu), std::logic_error) << "resolve first";
  if (torch::cuda::is_available()) {
    const auto gpu = c10::Device(c10::kCUDA, 0);
    EXPECT_EQ(resolve_precision(Precision::kFp16, gpu).precision, Precision::kFp16);
    const auto automatic = resolve_precision(Precision::kAuto, gpu).precision;
    EXPECT_EQ(automatic,
              cuda_devices().front().capability_major >= 8 ? Precision::kBf16 : Precision::kFp32);
  }
}

}  // namespace
}  // namespace nmt::runtime
