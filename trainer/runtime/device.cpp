#include "trainer/runtime/device.h"

#include <ATen/Context.h>
#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <torch/cuda.h>

#include <mutex>
#include <stdexcept>

#include "trainer/runtime/cuda_loader.h"

namespace nmt::runtime {

void check_device_name(const std::string& name) {
  if (name == "auto" || name == "cpu" || name == "cuda") return;
  const std::string prefix = "cuda:";
  const bool indexed = name.size() > prefix.size() && name.rfind(prefix, 0) == 0 &&
                       name.find_first_not_of("0123456789", prefix.size()) == std::string::npos;
  if (!indexed) {
    throw std::invalid_argument("unknown device '" + name +
                                "' (expected cpu, cuda, cuda:N or auto)");
  }
}

c10::Device select_device(const std::string& name) {
  check_device_name(name);
  if (name == "cpu") return c10::Device(c10::kCPU);
  ensure_cuda_loaded();  // LibTorch's CUDA half, where this machine has an NVIDIA driver
  const bool cuda = torch::cuda::is_available();
  if (name == "auto") return cuda ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
  if (!cuda) {
    throw std::invalid_argument("device '" + name +
                                "' requested but CUDA is not available: this LibTorch has no CUDA "
                                "support or no GPU is visible (build with a CUDA LibTorch via "
                                "-DCMAKE_PREFIX_PATH, or use --device cpu)");
  }
  c10::Device device(c10::kCUDA, 0);
  try {
    device = c10::Device(name);
  } catch (const std::exception&) {
    throw std::invalid_argument("malformed device '" + name + "' (expected cuda or cuda:N)");
  }
  const auto count = static_cast<int>(torch::cuda::device_count());
  if (device.has_index() && device.index() >= count) {
    throw std::invalid_argument(
        fmt::format("device '{}' requested but only {} GPU(s) are visible", name, count));
  }
  return device.has_index() ? device : c10::Device(c10::kCUDA, 0);
}

std::string describe_device(const c10::Device& device) {
  if (device.is_cpu()) {
    const int threads = at::get_num_threads();
    return fmt::format("cpu ({} thread{})", threads, threads == 1 ? "" : "s");
  }
  const auto gpus = torch::cuda::device_count();
  return fmt::format("{} (of {} GPU{})", device.str(), gpus, gpus == 1 ? "" : "s");
}

void seed_generator(const c10::Device& device, std::uint64_t seed) {
  auto generator = at::globalContext().defaultGenerator(device);
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_current_seed(seed);
}

}  // namespace nmt::runtime
