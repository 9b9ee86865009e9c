// Compiled only when CMake's probe found c10d's NCCL process group (a CUDA LibTorch build);
// device_collective_none.cpp stands in otherwise.
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <fmt/format.h>

#include <chrono>
#include <utility>
#include <vector>

#include "trainer/distributed/device_collective.h"

namespace nmt::distributed {
namespace {

class NcclCollective final : public DeviceCollective {
 public:
  NcclCollective(const Communicator& comm, double timeout_s) {
    const auto timeout = std::chrono::milliseconds(static_cast<std::int64_t>(timeout_s * 1000));
    const std::string& root_name = comm.rank_names().front();  // "host:pid"
    const std::string host = root_name.substr(0, root_name.rfind(':'));
    c10d::TCPStoreOptions options;
    options.isServer = comm.is_root();
    options.port = 0;  // rank 0 binds any free port and tells the others
    options.numWorkers = static_cast<std::size_t>(comm.size());
    options.waitWorkers = false;
    options.timeout = timeout;
    c10::intrusive_ptr<c10d::TCPStore> store;
    std::uint16_t port = 0;
    if (comm.is_root()) {
      store = c10::make_intrusive<c10d::TCPStore>(host, options);
      port = store->getPort();
    }
    comm.broadcast(&port, sizeof port);
    if (!comm.is_root()) {
      options.port = port;
      store = c10::make_intrusive<c10d::TCPStore>(host, options);
    }
    auto group_options = c10d::ProcessGroupNCCL::Options::create();
    group_options->timeout = timeout;
    group_ =
        c10::make_intrusive<c10d::ProcessGroupNCCL>(store, comm.rank(), comm.size(), group_options);
  }

  void start(at::Tensor& bucket) override {
    std::vector<at::Tensor> tensors = {bucket};
    pending_.push_back(group_->allreduce(tensors));
  }

  void wait_all() override {
    for (auto& work : pending_) work->wait();
    pending_.clear();
  }

  std::string name() const override { return "NCCL (c10d)"; }

 private:
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> group_;
  std::vector<decltype(std::declval<c10d::ProcessGroupNCCL&>().allreduce(
      std::declval<std::vector<at::Tensor>&>()))>
      pending_;
};

}  // namespace

bool nccl_available() {
  return true;
}

std::string nccl_version() {
  return c10d::getNcclVersion();
}

std::unique_ptr<DeviceCollective> make_nccl_collective(const Communicator& comm, double timeout_s) {
  return std::make_unique<NcclCollective>(comm, timeout_s);
}

}  // namespace nmt::distributed
