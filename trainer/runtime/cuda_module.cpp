// The CUDA half of cuda_info.h, built as a module that links LibTorch's CUDA library
// (cuda_loader.h loads it): compiled against a CUDA LibTorch only (CMake: NMT_TORCH_HAS_CUDA).
#include <ATen/cuda/CUDAContextLight.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/cuda.h>

#include "trainer/runtime/cuda_info.h"

extern "C" {

// The visible GPUs' properties, appended to `devices`.
__attribute__((visibility("default"))) void nmt_cuda_devices(
    std::vector<nmt::runtime::CudaDevice>* devices) {
  if (!torch::cuda::is_available()) return;
  const auto count = static_cast<int>(torch::cuda::device_count());
  for (int index = 0; index < count; ++index) {
    const auto* properties = at::cuda::getDeviceProperties(static_cast<c10::DeviceIndex>(index));
    nmt::runtime::CudaDevice device;
    device.index = index;
    device.name = properties->name;
    device.capability_major = properties->major;
    device.capability_minor = properties->minor;
    device.memory_bytes = static_cast<std::int64_t>(properties->totalGlobalMem);
    device.multiprocessors = properties->multiProcessorCount;
    devices->push_back(device);
  }
}

__attribute__((visibility("default"))) std::int64_t nmt_cuda_peak_memory_bytes(int index) {
  const auto stats =
      c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(index));
  return stats.allocated_bytes[static_cast<std::size_t>(c10::CachingAllocator::StatType::AGGREGATE)]
      .peak;
}

}  // extern "C"
