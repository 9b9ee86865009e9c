#pragma once
// What CUDA this build's LibTorch brings, and the GPUs it sees: for nmt-sysinfo and run
// provenance. Answers on every LibTorch line and on machines without a GPU (a CPU LibTorch reports
// built = false; a CUDA LibTorch without a GPU reports its versions and no devices).

#include <cstdint>
#include <string>
#include <vector>

namespace nmt::runtime {

struct CudaDevice {
  int index = 0;
  std::string name;          // e.g. "NVIDIA H200"
  int capability_major = 0;  // compute capability, e.g. 9.0
  int capability_minor = 0;
  std::int64_t memory_bytes = 0;  // total device memory
  int multiprocessors = 0;
};

struct CudaInfo {
  bool built = false;               // LibTorch was built with CUDA (its CUDA library is loaded)
  std::string runtime_version;      // CUDA runtime LibTorch was built against, "13.0"; "" if none
  std::string cudnn_version;        // "9.19.0"; "" if none
  bool c10d_nccl = false;           // this build's NCCL gradient all-reduce (CMake's probe)
  std::string nccl_version;         // the loaded NCCL, "2.28.9"; "" without c10d NCCL
  std::vector<CudaDevice> devices;  // empty without a GPU (or without CUDA)
};

CudaInfo cuda_info();

// The visible GPUs' properties; empty when this LibTorch has no CUDA or no GPU is present.
std::vector<CudaDevice> cuda_devices();

// The most memory LibTorch's caching allocator has held for tensors on GPU `index` since the
// process started (bytes); 0 without CUDA.
std::int64_t cuda_peak_memory_bytes(int index);

}  // namespace nmt::runtime
