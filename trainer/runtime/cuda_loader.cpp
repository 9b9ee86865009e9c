#include "trainer/runtime/cuda_loader.h"

#include <ATen/detail/CUDAHooksInterface.h>
#include <dlfcn.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace nmt::runtime {
namespace {

[[maybe_unused]] constexpr const char* kModuleName = "libnmt_cuda_runtime.so";

[[maybe_unused]] bool nvidia_driver_present() {
  return access("/proc/driver/nvidia/version", F_OK) == 0 || access("/dev/nvidiactl", F_OK) == 0;
}

[[maybe_unused]] bool forced_by_environment() {
  const char* value = std::getenv("NMT_LOAD_CUDA");
  return value != nullptr && std::strcmp(value, "always") == 0;
}

// Whether LibTorch's CUDA library is in this process (linked, or loaded before).
[[maybe_unused]] bool cuda_library_loaded() {
  void* handle = dlopen("libtorch_cuda.so", RTLD_NOW | RTLD_NOLOAD);
  if (handle == nullptr) return false;
  dlclose(handle);  // drops the reference RTLD_NOLOAD took
  return true;
}

}  // namespace

bool ensure_cuda_loaded(CudaLoad when) {
#ifdef NMT_CUDA_RUNTIME_MODULE
  static std::mutex mutex;
  static int state = -1;  // -1: not tried; else whether the module is in
  std::lock_guard<std::mutex> lock(mutex);
  if (state == 1) return true;
  // Linked already (nmt-train, the tests): the module adds its few functions, nothing more.
  const bool wanted = cuda_library_loaded() || when == CudaLoad::kAlways ||
                      forced_by_environment() || nvidia_driver_present();
  if (state == 0 || !wanted) return false;
  // The module links libtorch_cuda.so, whose static initialisers register the CUDA backend. It is
  // where the build wrote it, else found by name (LD_LIBRARY_PATH: a relocated copy of the tools).
  const char* where = NMT_CUDA_RUNTIME_MODULE;
  void* module = dlopen(where, RTLD_NOW | RTLD_GLOBAL);
  const std::string build_error = module == nullptr ? dlerror() : "";
  if (module == nullptr) {
    where = kModuleName;
    module = dlopen(where, RTLD_NOW | RTLD_GLOBAL);
  }
  state = module != nullptr ? 1 : 0;
  if (state == 0) {
    spdlog::warn(
        "could not load LibTorch's CUDA support ({}: {}; {}: {}): CUDA devices are "
        "unavailable",
        NMT_CUDA_RUNTIME_MODULE, build_error, kModuleName, dlerror());
    return false;
  }
  // LibTorch fixes its CUDA hooks at the first CUDA query: one made before this load left the
  // stubs in place for good, and their version query throws.
  try {
    spdlog::debug("loaded LibTorch's CUDA support ({}), CUDA runtime {}", where,
                  at::detail::getCUDAHooks().versionCUDART());
  } catch (const std::exception&) {
    spdlog::warn(
        "LibTorch's CUDA support was loaded after CUDA was first queried in this "
        "process: CUDA devices are unavailable");
    state = 0;
    return false;
  }
  return true;
#else
  (void)when;
  return false;  // a CPU-only LibTorch
#endif
}

}  // namespace nmt::runtime
