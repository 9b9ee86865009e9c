#include "trainer/distributed/replica_check.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <stdexcept>

namespace nmt::distributed {

std::uint64_t tensor_checksum(const std::vector<at::Tensor>& tensors) {
  std::uint64_t hash = 14695981039346656037ull;
  for (const auto& t : tensors) {
    const auto host = t.detach().to(at::kCPU).contiguous();
    const auto* bytes = static_cast<const unsigned char*>(host.data_ptr());
    const auto n = static_cast<std::size_t>(host.numel()) * host.element_size();
    for (std::size_t i = 0; i < n; ++i) {
      hash ^= bytes[i];
      hash *= 1099511628211ull;
    }
  }
  return hash;
}

void broadcast_tensors(std::vector<at::Tensor>& tensors, const Communicator& comm) {
  if (comm.size() == 1) return;
  at::NoGradGuard no_grad;
  for (auto& t : tensors) {
    auto host = t.detach().to(at::kCPU).contiguous().clone();
    comm.broadcast(host.data_ptr(), static_cast<std::size_t>(host.numel()) * host.element_size());
    t.detach().copy_(host);
  }
}

void verify_replicas(const std::vector<at::Tensor>& tensors, const Communicator& comm) {
  if (comm.size() == 1) return;
  const std::uint64_t mine = tensor_checksum(tensors);
  std::uint64_t root = mine;
  comm.broadcast(&root, sizeof root);
  const auto differs = comm.gather(mine != root ? 1.0 : 0.0);
  std::vector<double> flags(differs.begin(), differs.end());
  comm.broadcast(flags.data(), flags.size() * sizeof(double));
  std::vector<int> bad;
  for (std::size_t r = 0; r < flags.size(); ++r) {
    if (flags[r] != 0.0) bad.push_back(static_cast<int>(r));
  }
  if (!bad.empty()) {
    throw std::runtime_error(fmt::format(
        "replica check: the parameters of rank(s) {} differ from rank 0's after the broadcast "
        "(checksum {:016x} here, {:016x} on rank 0)",
        fmt::join(bad, ", "), mine, root));
  }
}

}  // namespace nmt::distributed
