// cuda_info.h's GPU queries through the CUDA module that cuda_loader.h loads (a CUDA LibTorch).
#include <dlfcn.h>

#include "trainer/runtime/cuda_info.h"
#include "trainer/runtime/cuda_loader.h"

namespace nmt::runtime {
namespace {

// A function of the loaded CUDA module; null when it is not loaded.
template <typename Function>
Function* module_function(const char* name) {
  if (!ensure_cuda_loaded()) return nullptr;
  return reinterpret_cast<Function*>(dlsym(RTLD_DEFAULT, name));
}

}  // namespace

std::vector<CudaDevice> cuda_devices() {
  std::vector<CudaDevice> devices;
  if (auto* list = module_function<void(std::vector<CudaDevice>*)>("nmt_cuda_devices"))
    list(&devices);
  return devices;
}

std::int64_t cuda_peak_memory_bytes(int index) {
  auto* peak = module_function<std::int64_t(int)>("nmt_cuda_peak_memory_bytes");
  return peak == nullptr ? 0 : peak(index);
}

}  // namespace nmt::runtime
