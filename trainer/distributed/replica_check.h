#pragma once
// Data-parallel replicas start identical: rank 0's parameters are broadcast to every rank, then a
// checksum of each replica's bytes is compared with rank 0's, so a rank that somehow diverged
// (a different config, a bad copy) stops the job at the start instead of training silently apart.

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <vector>

#include "trainer/distributed/communicator.h"

namespace nmt::distributed {

// FNV-1a over the tensors' bytes, in order (CUDA tensors are copied to the host first).
std::uint64_t tensor_checksum(const std::vector<at::Tensor>& tensors);

// Overwrites every rank's tensors with rank 0's (same shapes and types everywhere).
void broadcast_tensors(std::vector<at::Tensor>& tensors, const Communicator& comm);

// Throws on every rank, naming the ranks whose checksum differs from rank 0's.
void verify_replicas(const std::vector<at::Tensor>& tensors, const Communicator& comm);

}  // namespace nmt::distributed
