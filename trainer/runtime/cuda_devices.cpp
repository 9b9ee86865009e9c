// Compiled against a CUDA LibTorch only (CMake: NMT_TORCH_HAS_CUDA); cuda_devices_none.cpp
// otherwise.
#include <ATen/cuda/CUDAContextLight.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <torch/cuda.h>

#include "trainer/runtime/cuda_info.h"

namespace nmt::runtime {

std::vector<CudaDevice> cuda_devices() {
  std::vector<CudaDevice> devices;
  if (!torch::cuda::is_available()) return devices;
  const auto count = static_cast<int>(torch::cuda::device_count());
  for (int index = 0; index < count; ++index) {
    const auto* properties = at::cuda::getDeviceProperties(index);
    CudaDevice device;
    device.index = index;
    device.name = properties->name;
    device.capability_major = properties->major;
    device.capability_minor = properties->minor;
    device.memory_bytes = static_cast<std::int64_t>(properties->totalGlobalMem);
    device.multiprocessors = properties->multiProcessorCount;
    devices.push_back(device);
  }
  return devices;
}

std::int64_t cuda_peak_memory_bytes(int index) {
  const auto stats =
      c10::cuda::CUDACachingAllocator::getDeviceStats(static_cast<c10::DeviceIndex>(index));
  return stats.allocated_bytes[static_cast<std::size_t>(c10::CachingAllocator::StatType::AGGREGATE)]
      .peak;
}

}  // namespace nmt::runtime
