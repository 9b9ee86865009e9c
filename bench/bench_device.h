#pragma once
// --threads and --device of the LibTorch benchmarks, and the device they then run on.

#include <c10/core/Device.h>
#include <CLI/CLI.hpp>

#include <string>

#include "trainer/runtime/blas_backend.h"
#include "trainer/runtime/cpu_kernels.h"
#include "trainer/runtime/device.h"

namespace nmt::bench {

struct DeviceFlags {
  std::string device = "cpu";  // cpu, cuda or cuda:N
  int threads = 0;             // CPU threads; 0: all cores
};

inline void add_device_flags(CLI::App& app, DeviceFlags& flags) {
  app.add_option("--threads", flags.threads, "CPU threads (0: all cores)");
  app.add_option("--device", flags.device, "cpu, cuda or cuda:N")->capture_default_str();
}

// The device the flags name, with the CPU threads set when it is the CPU.
inline c10::Device select_device(const DeviceFlags& flags) {
  const auto device = runtime::select_device(flags.device);
  if (device.is_cpu()) runtime::configure_cpu_threads(flags.threads);
  return device;
}

// What every benchmark prints before its figures: the CPU and the kernel path of each kind of
// product (nmt-sysinfo --kernels has the reasons).
inline std::string cpu_line() {
  return "cpu: " + runtime::cpu_kernels().summary();
}

}  // namespace nmt::bench
