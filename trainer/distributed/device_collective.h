#pragma once
// All-reduce of CUDA buckets by a GPU-native library: NCCL through LibTorch's c10d process group,
// where the LibTorch build has it (CMake probes for it: NMT_HAVE_C10D_NCCL). The gradient reducer
// uses it when present for CUDA runs (dist.backend auto or nccl); otherwise CUDA gradients go
// through MPI (CUDA-aware, or staged through host memory).

#include <ATen/core/Tensor.h>

#include <memory>
#include <string>

#include "trainer/distributed/communicator.h"

namespace nmt::distributed {

class DeviceCollective {
 public:
  virtual ~DeviceCollective() = default;
  // Starts an in-place sum of `bucket` (a CUDA tensor) over all ranks.
  virtual void start(at::Tensor& bucket) = 0;
  // Waits for every started sum; afterwards the buckets hold the results.
  virtual void wait_all() = 0;
  virtual std::string name() const = 0;
};

// Whether this build can create one (compiled against a LibTorch with c10d NCCL).
bool nccl_available();

// The version of the NCCL library loaded ("2.28.9"); "" when !nccl_available().
std::string nccl_version();

// NCCL over all ranks of `comm` (bootstrapped through a c10d TCPStore on rank 0, whose port goes
// out by MPI broadcast). `timeout_s` bounds each collective, as the hang timeout does for MPI.
// Throws when !nccl_available().
std::unique_ptr<DeviceCollective> make_nccl_collective(const Communicator& comm, double timeout_s);

}  // namespace nmt::distributed
