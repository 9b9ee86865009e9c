#include "trainer/runtime/cpu_kernels.h"

#include <ATen/Context.h>
#include <ATen/Version.h>
#include <c10/core/QEngine.h>
#include <fmt/format.h>

#include <cstdlib>
#include <sstream>
#include <tuple>
#include <utility>

#include "common/cpu_model.h"
#include "trainer/runtime/blas_backend.h"
#include "trainer/runtime/packed_gemm.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

namespace nmt::runtime {
namespace {

// CPUID leaf 1's family and model as the vendors document them (extended fields added).
std::pair<int, int> cpuid_family_model() {
#if defined(__x86_64__) || defined(__i386__)
  unsigned int eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return {0, 0};
  const int base_family = static_cast<int>((eax >> 8) & 0xf);
  const int base_model = static_cast<int>((eax >> 4) & 0xf);
  const int family =
      base_family == 0xf ? base_family + static_cast<int>((eax >> 20) & 0xff) : base_family;
  const int model = base_family == 0x6 || base_family == 0xf
                        ? base_model + (static_cast<int>((eax >> 16) & 0xf) << 4)
                        : base_model;
  return {family, model};
#else
  return {0, 0};
#endif
}

// "CPU capability usage: AVX2" in ATen's build summary; empty when the line is absent.
std::string aten_capability() {
  std::istringstream lines(at::show_config());
  const std::string key = "CPU capability usage:";
  for (std::string line; std::getline(lines, line);) {
    const auto at = line.find(key);
    if (at == std::string::npos) continue;
    auto value = line.substr(at + key.size());
    value.erase(0, value.find_first_not_of(' '));
    return value;
  }
  return {};
}

KernelPath vector_path(const CpuInstructions& cpu, const std::string& capability) {
  if (capability.empty()) {
    return {"vector kernels", "unknown", "this LibTorch does not report its CPU capability"};
  }
  const char* forced = std::getenv("ATEN_CPU_CAPABILITY");
  if (forced != nullptr && forced[0] != '\0') {
    return {"vector kernels", capability, fmt::format("ATEN_CPU_CAPABILITY={}", forced)};
  }
  std::string reason;
  if (capability.find("AVX512") != std::string::npos) {
    reason = "the CPU has AVX512 F, BW, VL and DQ";
  } else if (capability.find("AVX2") != std::string::npos) {
    reason = cpu.avx512 ? "ATen's default on this CPU (it has AVX512 too)"
                        : "the CPU has AVX2 and FMA, not AVX512 F, BW, VL and DQ";
  } else {
    reason = cpu.avx2 ? "this ATen build has no AVX2 kernels" : "the CPU has no AVX2";
  }
  return {"vector kernels", capability, reason};
}

KernelPath fp32_path(const std::string& blas) {
  if (blas == "mkl") {
    return {"fp32 matmul", "mkl", "LibTorch links MKL, which picks its code path by CPUID"};
  }
  if (blas == "reference") {
    return {"fp32 matmul", "reference BLAS",
            "libblas.so.3 points at the reference BLAS: install libopenblas0-pthread"};
  }
  return {"fp32 matmul", blas, "the BLAS LibTorch loaded (libblas.so.3 or linked in)"};
}

KernelPath decoding_path(const std::string& blas, bool packed_gemm) {
  if (packed_gemm) {
    return {"fp32 decoding", blas + " packed weights",
            "the BLAS has packed products: each weight is laid out once, not at every step"};
  }
  return {"fp32 decoding", "plain products", "the BLAS has no packed products"};
}

KernelPath bf16_path(const CpuInstructions& cpu) {
  if (cpu.amx_bf16) return {"bf16 matmul", "oneDNN AMX", "the CPU has AMX-BF16 tiles"};
  if (cpu.avx512_bf16) {
    return {"bf16 matmul", "oneDNN AVX512-BF16", "the CPU has AVX512-BF16, no AMX"};
  }
  return {"bf16 matmul", "none",
          "no AMX-BF16 or AVX512-BF16: bf16 products would be converted to fp32 and back, so "
          "precision auto trains in fp32"};
}

KernelPath int8_path(const CpuInstructions& cpu, const std::string& qengine) {
  std::string vnni = cpu.amx_int8      ? "AMX-INT8"
                     : cpu.avx512_vnni ? "AVX512-VNNI"
                     : cpu.avx_vnni    ? "AVX-VNNI"
                                       : "";
  const std::string reason =
      vnni.empty() ? "no VNNI: 8-bit products go through 16-bit multiply-adds"
                   : fmt::format("the CPU has {}: 8-bit dot products in one instruction", vnni);
  return {"int8 matmul", vnni.empty() ? qengine : qengine + " " + vnni, reason};
}

}  // namespace

std::string cpu_model() {
  return nmt::cpu_model();
}

std::string CpuInstructions::names() const {
  std::string out;
  const std::pair<bool, const char*> all[] = {{avx2, "AVX2"},
                                              {fma, "FMA"},
                                              {avx512, "AVX512"},
                                              {avx512_bf16, "AVX512-BF16"},
                                              {avx512_vnni, "AVX512-VNNI"},
                                              {avx_vnni, "AVX-VNNI"},
                                              {amx_bf16, "AMX-BF16"},
                                              {amx_int8, "AMX-INT8"}};
  for (const auto& [present, name] : all) {
    if (!present) continue;
    if (!out.empty()) out += ' ';
    out += name;
  }
  return out.empty() ? "none of AVX2 and later" : out;
}

CpuInstructions cpu_instructions() {
  CpuInstructions cpu;
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  cpu.avx2 = __builtin_cpu_supports("avx2");
  cpu.fma = __builtin_cpu_supports("fma");
  cpu.avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  cpu.avx512_bf16 = __builtin_cpu_supports("avx512bf16");
  cpu.avx512_vnni = __builtin_cpu_supports("avx512vnni");
  cpu.avx_vnni = __builtin_cpu_supports("avxvnni");
  cpu.amx_bf16 = __builtin_cpu_supports("amx-bf16");
  cpu.amx_int8 = __builtin_cpu_supports("amx-int8");
#endif
  return cpu;
}

std::vector<KernelPath> choose_kernel_paths(const CpuInstructions& cpu,
                                            const std::string& aten_capability,
                                            const std::string& blas, bool packed_gemm,
                                            const std::string& qengine) {
  return {vector_path(cpu, aten_capability), fp32_path(blas), decoding_path(blas, packed_gemm),
          bf16_path(cpu), int8_path(cpu, qengine)};
}

CpuKernels cpu_kernels() {
  CpuKernels kernels;
  kernels.cpu = cpu_model();
  std::tie(kernels.family, kernels.model) = cpuid_family_model();
  kernels.instructions = cpu_instructions();
  kernels.bf16_native = kernels.instructions.amx_bf16 || kernels.instructions.avx512_bf16;
  kernels.paths =
      choose_kernel_paths(kernels.instructions, aten_capability(), detect_blas_backend().name,
                          PackedWeight::available(), c10::toString(at::globalContext().qEngine()));
  return kernels;
}

std::string CpuKernels::summary() const {
  std::string out = cpu.empty() ? std::string("unknown CPU") : cpu;
  out += family > 0 ? fmt::format(" (family {} model {}; {})", family, model, instructions.names())
                    : " (" + instructions.names() + ")";
  for (const auto& path : paths) out += "; " + path.operation + " " + path.path;
  return out;
}

}  // namespace nmt::runtime
