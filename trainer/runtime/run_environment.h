#pragma once
// What a process trains or evaluates on, as flat provenance entries for its tracked run: the
// LibTorch version and line, the CUDA, cuDNN and NCCL versions LibTorch brings, the device and its
// GPU's model, and the CPU's model. Answers on every LibTorch line, with or without a GPU.

#include <c10/core/Device.h>

#include <map>
#include <string>

namespace nmt::runtime {

// "current" (the pinned LibTorch release) or "debian" (Debian's libtorch-dev): the line this build
// was configured with.
const char* libtorch_line();

// Keys: libtorch.version, libtorch.line, cuda.runtime, cuda.cudnn, cuda.nccl (each only where the
// build has it), device ("cpu", "cuda:0"), gpu (the device's model, CUDA only), cpu.
std::map<std::string, std::string> environment_provenance(const c10::Device& device);

}  // namespace nmt::runtime
