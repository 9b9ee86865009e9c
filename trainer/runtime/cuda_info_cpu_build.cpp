// This LibTorch has no CUDA: there are no GPUs to describe.
#include "trainer/runtime/cuda_info.h"

namespace nmt::runtime {

std::vector<CudaDevice> cuda_devices() {
  return {};
}

std::int64_t cuda_peak_memory_bytes(int) {
  return 0;
}

}  // namespace nmt::runtime
