// nmt-sysinfo: what this build runs on (library versions, BLAS backend and its measured
// matrix-multiply throughput, threads, devices). The first thing to run on a new machine or cluster
// node, and what the quickstart prints before it starts.

#include <ATen/Parallel.h>
#include <hdf5.h>
#include <spdlog/version.h>
#include <sqlite3.h>
#include <torch/version.h>
#include <yaml-cpp/yaml.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <iostream>

#include "apps/tool_main.h"
#include "common/cli.h"
#include "common/git_state.h"
#include "tracker/store/schema.h"
#include "trainer/distributed/mpi_context.h"
#include "trainer/runtime/allocator.h"
#include "trainer/runtime/blas_backend.h"
#include "trainer/runtime/cpu_kernels.h"
#include "trainer/runtime/cuda_info.h"
#include "trainer/runtime/device.h"
#include "trainer/runtime/run_environment.h"

namespace {

struct Options {
  bool json = false;
  int matmul_size = 1024;
  int threads = 0;
  std::string device = "auto";
  bool require_fast_blas = false;
  bool kernels_only = false;
};

nlohmann::json cuda_json(const nmt::runtime::CudaInfo& cuda) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& device : cuda.devices) {
    devices.push_back(
        {{"index", device.index},
         {"name", device.name},
         {"capability", fmt::format("{}.{}", device.capability_major, device.capability_minor)},
         {"memory_gib", static_cast<double>(device.memory_bytes) / (1 << 30)},
         {"multiprocessors", device.multiprocessors}});
  }
  return {{"built", cuda.built},         {"runtime", cuda.runtime_version},
          {"cudnn", cuda.cudnn_version}, {"c10d_nccl", cuda.c10d_nccl},
          {"nccl", cuda.nccl_version},   {"devices", devices}};
}

nlohmann::json kernels_json(const nmt::runtime::CpuKernels& kernels) {
  nlohmann::json paths = nlohmann::json::array();
  for (const auto& path : kernels.paths) {
    paths.push_back({{"operation", path.operation}, {"path", path.path}, {"reason", path.reason}});
  }
  return {{"family", kernels.family},
          {"model", kernels.model},
          {"instructions", kernels.instructions.names()},
          {"bf16_native", kernels.bf16_native},
          {"paths", paths}};
}

// The kernel paths, one line each: "fp32 matmul      mkl (why)".
void print_kernels(const nlohmann::json& kernels) {
  std::cout << fmt::format("{:<18} {}\n", "instructions",
                           kernels["instructions"].get<std::string>());
  for (const auto& path : kernels["paths"]) {
    std::cout << fmt::format("{:<18} {} ({})\n", path["operation"].get<std::string>(),
                             path["path"].get<std::string>(), path["reason"].get<std::string>());
  }
}

nlohmann::json collect(const Options& options) {
  if (options.threads > 0) at::set_num_threads(options.threads);
  const auto device = nmt::runtime::select_device(options.device);
  const auto blas = nmt::runtime::check_blas_backend();
  unsigned h5_major = 0, h5_minor = 0, h5_release = 0;
  H5get_libversion(&h5_major, &h5_minor, &h5_release);
  nlohmann::json info;
  info["libtorch"] = TORCH_VERSION;
  info["libtorch_line"] = nmt::runtime::libtorch_line();
  info["git"] = {{"revision", nmt::git_state().revision},
                 {"dirty", nmt::git_state().dirty},
                 {"diff_sha256", nmt::git_state().diff_sha256}};
  info["cpu"] = nmt::runtime::cpu_model();
  info["cuda"] = cuda_json(nmt::runtime::cuda_info());
  info["blas"] = {{"backend", blas.name}, {"library", blas.library}};
  info["kernels"] = kernels_json(nmt::runtime::cpu_kernels());
  info["intra_op_threads"] = at::get_num_threads();
  info["cpus"] = nmt::runtime::available_cpus();  // this process's affinity, not the machine's
  info["malloc"] = nmt::runtime::malloc_implementation();
  // What idle OpenMP threads do (common/thread_pools.h): the settings this process runs with.
  const auto env = [](const char* name) -> nlohmann::json {
    const char* value = std::getenv(name);
    return value == nullptr ? nlohmann::json() : nlohmann::json(value);
  };
  info["openmp_wait"] = {{"OMP_WAIT_POLICY", env("OMP_WAIT_POLICY")},
                         {"GOMP_SPINCOUNT", env("GOMP_SPINCOUNT")}};
  info["device"] = nmt::runtime::describe_device(device);
  info["mpi"] = nmt::distributed::MpiContext::library_version();
  info["hdf5"] = fmt::format("{}.{}.{}", h5_major, h5_minor, h5_release);
  info["sqlite"] = sqlite3_libversion();
  info["tracker_schema"] = nmt::tracker::latest_schema_version();
  info["spdlog"] = fmt::format("{}.{}.{}", SPDLOG_VER_MAJOR, SPDLOG_VER_MINOR, SPDLOG_VER_PATCH);
  if (options.matmul_size > 0) {
    info["matmul_gflops"] = nmt::runtime::measure_matmul_gflops(options.matmul_size);
    info["matmul_size"] = options.matmul_size;
  }
  return info;
}

std::string describe_cuda(const nlohmann::json& cuda) {
  if (!cuda["built"].get<bool>()) return "not built (CPU LibTorch)";
  auto text = fmt::format("runtime {}, cuDNN {}, c10d NCCL {}", cuda["runtime"].get<std::string>(),
                          cuda["cudnn"].get<std::string>(),
                          cuda["c10d_nccl"].get<bool>() ? cuda["nccl"].get<std::string>() : "no");
  if (cuda["devices"].empty()) return text + "; no GPU visible";
  for (const auto& device : cuda["devices"]) {
    text += fmt::format("; cuda:{} {} (sm {}, {:.0f} GiB)", device["index"].get<int>(),
                        device["name"].get<std::string>(), device["capability"].get<std::string>(),
                        device["memory_gib"].get<double>());
  }
  return text;
}

void print_text(const nlohmann::json& info) {
  for (const auto& [key, value] : info.items()) {
    if (key == "blas") {
      std::cout << fmt::format("{:<18} {} ({})\n", key, value["backend"].get<std::string>(),
                               value["library"].get<std::string>());
    } else if (key == "matmul_gflops") {
      std::cout << fmt::format("{:<18} {:.1f} GFLOP/s (fp32 {}x{} product)\n", key,
                               value.get<double>(), info["matmul_size"].get<int>(),
                               info["matmul_size"].get<int>());
    } else if (key == "kernels") {
      print_kernels(value);
    } else if (key == "cuda") {
      std::cout << fmt::format("{:<18} {}\n", key, describe_cuda(value));
    } else if (key == "git") {
      const std::string revision = value["revision"].get<std::string>();
      std::cout << fmt::format("{:<18} {}\n", key,
                               revision.empty() ? std::string("not a git checkout")
                               : value["dirty"].get<bool>()
                                   ? revision + ", with uncommitted changes (diff sha256 " +
                                         value["diff_sha256"].get<std::string>().substr(0, 12) + ")"
                                   : revision);
    } else if (key != "matmul_size") {
      std::cout << fmt::format("{:<18} {}\n", key,
                               value.is_string() ? value.get<std::string>() : value.dump());
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Report the libraries, BLAS backend, threads and devices this build runs on.",
               "nmt-sysinfo"};
  Options options;
  app.add_flag("--json", options.json, "Print one JSON object instead of text");
  app.add_option("--matmul-size", options.matmul_size,
                 "Side of the square matrices timed for GFLOP/s (0 skips the measurement)")
      ->capture_default_str();
  app.add_option("--threads", options.threads, "Intra-op threads (0: LibTorch's default)");
  app.add_option("--device", options.device, "cpu, cuda, cuda:N or auto")
      ->capture_default_str()
      ->check(nmt::parsed_by(nmt::runtime::check_device_name));
  app.add_flag("--kernels", options.kernels_only,
               "Print only the CPU, its instruction sets and the kernel path of each kind of "
               "product (no measurement)");
  app.add_flag("--require-fast-blas", options.require_fast_blas,
               "Exit with status 3 when LibTorch runs on the reference BLAS");
  return nmt::apps::run_main(app, argc, argv, [&] {
    if (options.kernels_only) {
      if (options.threads > 0) at::set_num_threads(options.threads);
      const auto kernels = nmt::runtime::cpu_kernels();
      std::cout << fmt::format("{:<18} {} (family {} model {})\n", "cpu", kernels.cpu,
                               kernels.family, kernels.model);
      print_kernels(kernels_json(kernels));
      return 0;
    }
    const auto info = collect(options);
    if (options.json) {
      std::cout << info.dump(2) << "\n";
    } else {
      print_text(info);
    }
    return options.require_fast_blas && info["blas"]["backend"] == "reference" ? 3 : 0;
  });
}
