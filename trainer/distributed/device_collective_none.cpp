// This LibTorch build has no c10d NCCL process group: CUDA gradients go through MPI.
#include <stdexcept>

#include "trainer/distributed/device_collective.h"

namespace nmt::distributed {

bool nccl_available() {
  return false;
}

std::string nccl_version() {
  return "";
}

std::unique_ptr<DeviceCollective> make_nccl_collective(const Communicator&, double) {
  throw std::runtime_error(
      "dist.backend nccl: this build's LibTorch has no c10d NCCL process group (CMake reported "
      "NMT_HAVE_C10D_NCCL=OFF); use dist.backend mpi or mpi-staged, or build against a CUDA "
      "LibTorch");
}

}  // namespace nmt::distributed
