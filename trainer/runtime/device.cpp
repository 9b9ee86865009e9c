#include "trainer/runtime/device.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <torch/cuda.h>

#include <stdexcept>

namespace nmt::runtime {

c10::Device select_device(const std::string& name) {
  const bool cuda = torch::cuda::is_available();
  if (name == "auto") return cuda ? c10::Device(c10::kCUDA, 0) : c10::Device(c10::kCPU);
  if (name == "cpu") return c10::Device(c10::kCPU);
  if (name.rfind("cuda", 0) != 0) {
    throw std::invalid_argument("unknown device '" + name +
                                "' (expected cpu, cuda, cuda:N or auto)");
  }
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
  if (device.is_cpu()) return fmt::format("cpu ({} threads)", at::get_num_threads());
  return fmt::format("{} (of {} GPUs)", device.str(), torch::cuda::device_count());
}

}  // namespace nmt::runtime
