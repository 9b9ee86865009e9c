#include "trainer/runtime/cuda_info.h"

#include <ATen/detail/CUDAHooksInterface.h>
#include <fmt/format.h>

#include "trainer/distributed/device_collective.h"
#include "trainer/runtime/cuda_loader.h"

namespace nmt::runtime {
namespace {

// CUDA's and cuDNN's version numbers: 13000 -> "13.0", 91900 -> "9.19.0".
std::string cuda_version_string(long version) {
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}
std::string cudnn_version_string(long version) {
  return fmt::format("{}.{}.{}", version / 10000, (version % 10000) / 100, version % 100);
}

}  // namespace

CudaInfo cuda_info() {
  CudaInfo info;
  ensure_cuda_loaded();
  const auto& hooks = at::detail::getCUDAHooks();
  // Without LibTorch's CUDA library the hooks are the stubs, whose version queries throw.
  try {
    info.runtime_version = cuda_version_string(hooks.versionCUDART());
    info.built = true;
  } catch (const std::exception&) {
    return info;
  }
  if (hooks.hasCuDNN()) {
    try {
      info.cudnn_version = cudnn_version_string(hooks.versionCuDNN());
    } catch (const std::exception&) {
      // a CUDA build without cuDNN: leave it empty
    }
  }
  info.c10d_nccl = distributed::nccl_available();
  info.nccl_version = distributed::nccl_version();
  info.devices = cuda_devices();
  return info;
}

}  // namespace nmt::runtime
