#include "trainer/runtime/run_environment.h"

#include <torch/version.h>

#include "trainer/runtime/cpu_kernels.h"
#include "trainer/runtime/cuda_info.h"

namespace nmt::runtime {

const char* libtorch_line() {
  return NMT_LIBTORCH_LINE;
}

std::map<std::string, std::string> environment_provenance(const c10::Device& device) {
  std::map<std::string, std::string> entries;
  entries["libtorch.version"] = TORCH_VERSION;
  entries["libtorch.line"] = libtorch_line();
  const CudaInfo cuda = cuda_info();
  if (!cuda.runtime_version.empty()) entries["cuda.runtime"] = cuda.runtime_version;
  if (!cuda.cudnn_version.empty()) entries["cuda.cudnn"] = cuda.cudnn_version;
  if (!cuda.nccl_version.empty()) entries["cuda.nccl"] = cuda.nccl_version;
  entries["device"] = device.str();
  if (device.is_cuda()) {
    for (const auto& gpu : cuda.devices) {
      if (gpu.index == device.index()) entries["gpu"] = gpu.name;
    }
  }
  if (const std::string cpu = cpu_model(); !cpu.empty()) entries["cpu"] = cpu;
  return entries;
}

}  // namespace nmt::runtime
