#include "trainer/runtime/blas_backend.h"

#include <ATen/Parallel.h>
#include <ATen/ops/matmul.h>
#include <ATen/ops/randn.h>
#include <dlfcn.h>
#include <link.h>
#include <sched.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <initializer_list>
#include <thread>
#include <vector>

namespace nmt::runtime {
namespace {

int collect_library(dl_phdr_info* info, size_t /*size*/, void* data) {
  auto* names = static_cast<std::vector<std::string>*>(data);
  if (info->dlpi_name != nullptr && info->dlpi_name[0] != '\0')
    names->emplace_back(info->dlpi_name);
  return 0;
}

std::string classify(const std::string& resolved) {
  const std::string file = std::filesystem::path(resolved).filename().string();
  if (resolved.find("openblas") != std::string::npos) return "openblas";
  if (resolved.find("mkl") != std::string::npos) return "mkl";
  if (resolved.find("blis") != std::string::npos) return "blis";
  if (resolved.find("atlas") != std::string::npos) return "atlas";
  // Debian's reference BLAS lives in .../blas/libblas.so.3 (the alternatives target).
  if (file.rfind("libblas.so", 0) == 0) return "reference";
  return "unknown";
}

bool is_blas_library(const std::string& path) {
  const std::string file = std::filesystem::path(path).filename().string();
  for (const char* prefix : {"libblas.so", "libopenblas", "libmkl_rt", "libmkl_core", "libblis"}) {
    if (file.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

}  // namespace

BlasBackend detect_blas_backend() {
  std::vector<std::string> loaded;
  dl_iterate_phdr(collect_library, &loaded);
  for (const auto& path : loaded) {
    if (!is_blas_library(path)) continue;
    std::error_code ec;
    const auto resolved = std::filesystem::canonical(path, ec);
    const std::string real = ec ? path : resolved.string();
    return BlasBackend{classify(real), real};
  }
  // PyPI's LibTorch links MKL statically into libtorch_cpu.so and exports MKL's version query.
  if (void* address = dlsym(RTLD_DEFAULT, "MKL_Get_Version_String")) {
    Dl_info info{};
    if (dladdr(address, &info) != 0 && info.dli_fname != nullptr) {
      return BlasBackend{"mkl", info.dli_fname};
    }
    return BlasBackend{"mkl", ""};
  }
  return BlasBackend{"unknown", ""};
}

double measure_matmul_gflops(int n, int repeats, c10::ScalarType type) {
  const auto a = at::randn({n, n}).to(type);
  const auto b = at::randn({n, n}).to(type);
  at::matmul(a, b);  // warm-up: thread pool start, page faults
  double best_seconds = 1e30;
  for (int i = 0; i < repeats; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const auto c = at::matmul(a, b);
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    best_seconds = std::min(best_seconds, elapsed.count());
  }
  return 2.0 * n * n * static_cast<double>(n) / best_seconds / 1e9;
}

namespace {

// The first of `symbols` (OpenBLAS's, MKL's and BLIS's names of one call) that this process has,
// as a function of type F; nullptr when none is loaded.
template <typename F>
F blas_call(std::initializer_list<const char*> symbols) {
  for (const char* symbol : symbols) {
    if (void* address = dlsym(RTLD_DEFAULT, symbol)) return reinterpret_cast<F>(address);
  }
  return nullptr;
}

}  // namespace

bool set_blas_threads(int threads) {
  const auto set = blas_call<void (*)(int)>(
      {"openblas_set_num_threads", "MKL_Set_Num_Threads", "bli_thread_set_num_threads"});
  if (set != nullptr) set(threads);
  return set != nullptr;
}

int blas_threads() {
  const auto get = blas_call<int (*)()>(
      {"MKL_Get_Max_Threads", "openblas_get_num_threads", "bli_thread_get_num_threads"});
  return get != nullptr ? get() : 0;
}

void single_threaded_kernels_here() {
  at::set_num_threads(1);  // this thread's OpenMP teams (and, in LibTorch's MKL build, MKL's)
  if (const auto set_local = blas_call<int (*)(int)>({"MKL_Set_Num_Threads_Local"})) set_local(1);
}

int available_cpus() {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  int cpus = sched_getaffinity(0, sizeof mask, &mask) == 0
                 ? CPU_COUNT(&mask)
                 : static_cast<int>(std::thread::hardware_concurrency());
  // A Slurm task's share where the job binds no CPUs (task/none): its --cpus-per-task.
  if (const char* per_task = std::getenv("SLURM_CPUS_PER_TASK")) {
    char* end = nullptr;
    const long n = std::strtol(per_task, &end, 10);
    if (end != per_task && *end == '\0' && n > 0 && n < cpus) cpus = static_cast<int>(n);
  }
  return std::max(1, cpus);
}

void configure_cpu_threads(int threads) {
  const int n = threads > 0 ? threads : available_cpus();
  at::set_num_threads(1);
  if (!set_blas_threads(n))
    at::set_num_threads(n);  // a BLAS we cannot steer: let LibTorch use them
}

BlasBackend check_blas_backend() {
  const BlasBackend backend = detect_blas_backend();
  if (backend.is_reference()) {
    spdlog::warn(
        "LibTorch is using the reference BLAS ({}), about 35x slower on matrix products. Install "
        "libopenblas0-pthread (jobs/setup.sh does), or select it with update-alternatives "
        "--config libblas.so.3-$(dpkg-architecture -qDEB_HOST_MULTIARCH).",
        backend.library);
  } else {
    spdlog::debug("BLAS backend: {} ({})", backend.name,
                  backend.library.empty() ? "linked into LibTorch" : backend.library);
  }
  return backend;
}

}  // namespace nmt::runtime
