#pragma once
// Which kernels LibTorch runs on this CPU, and why, read at run time: the instruction sets from
// CPUID, the vector kernels ATen dispatched to, the library each kind of matrix product goes to,
// and the int8 engine. Every choice is by instruction set, never by the vendor's name. nmt-sysinfo
// prints it (--kernels), and every benchmark prints its one-line summary beside its figures so
// that a figure always says where it came from.

#include <string>
#include <vector>

namespace nmt::runtime {

// The processor's model name ("Intel(R) Xeon(R) Platinum 8488C"): CPUID's brand string on x86,
// else /proc/cpuinfo's "model name"; empty when neither says.
std::string cpu_model();

// The instruction sets that decide a kernel path (CPUID through the compiler's cpu_supports).
struct CpuInstructions {
  bool avx2 = false, fma = false;
  bool avx512 = false;  // AVX512 F, BW, VL and DQ: what ATen's AVX512 kernels need
  bool avx512_bf16 = false, avx512_vnni = false, avx_vnni = false;
  bool amx_bf16 = false, amx_int8 = false;
  // "AVX2 FMA AVX512 AVX512-BF16 ...": the ones present, in this order.
  std::string names() const;
};
CpuInstructions cpu_instructions();

struct KernelPath {
  // "vector kernels", "fp32 matmul", "fp32 decoding", "bf16 matmul", "int8 matmul"
  std::string operation;
  std::string path;    // what runs it, e.g. "AVX2", "mkl", "oneDNN AMX"
  std::string reason;  // why, from the instructions and libraries found
};

struct CpuKernels {
  std::string cpu;            // the model name (cpu_model())
  int family = 0, model = 0;  // CPUID's display family and model (AMD family 25: Zen 3 or 4)
  CpuInstructions instructions;
  bool bf16_native = false;  // bf16 products in hardware (AMX-BF16 or AVX512-BF16)
  std::vector<KernelPath> paths;
  // One line: "AMD EPYC (family 25 model 1; AVX2 FMA); vector kernels AVX2; fp32 matmul mkl; ...".
  std::string summary() const;
};

// The instructions and the paths for this process (the BLAS it loaded, the ATen build it runs).
CpuKernels cpu_kernels();

// The decisions alone, from given facts, for tests: ATen's capability as show_config() reports it
// ("AVX2"; empty when not reported), the BLAS backend's name, whether it has packed products
// (PackedWeight::available()), the quantized engine's name.
std::vector<KernelPath> choose_kernel_paths(const CpuInstructions& cpu,
                                            const std::string& aten_capability,
                                            const std::string& blas, bool packed_gemm,
                                            const std::string& qengine);

}  // namespace nmt::runtime
