#include "trainer/train/data_parallel.h"

#include <spdlog/spdlog.h>
#include <torch/cuda.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "trainer/distributed/replica_check.h"
#include "trainer/runtime/device.h"

namespace nmt::train {

c10::Device choose_device(const TrainConfig& t, const distributed::Communicator& comm,
                          const runtime::LauncherVariables& launcher) {
  c10::Device device = runtime::select_device(t.device);
  std::string why = "train.device " + t.device;
  if (device.is_cuda()) {
    runtime::DeviceRequest request;
    request.local_rank = comm.local_rank();
    request.local_size = comm.local_size();
    request.visible = static_cast<int>(torch::cuda::device_count());
    if (t.device.find(':') != std::string::npos) request.index = device.index();
    request.allow_shared = t.allow_shared_gpu;
    request.launcher = launcher;
    const auto assignment = runtime::assign_device(request);
    device = c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(assignment.index));
    why = assignment.reason;
  } else if (t.device == "auto") {
    why = "train.device auto, and CUDA is not available";
  }
  spdlog::info("rank {} of {} on {} (local rank {} of {}): {}; {}", comm.rank(), comm.size(),
               comm.rank_names()[static_cast<std::size_t>(comm.rank())], comm.local_rank(),
               comm.local_size(), device.str(), why);
  return device;
}

DataParallel join_data_parallel(torch::nn::Module& model, const DistConfig& d,
                                const c10::Device& device, distributed::Communicator& comm) {
  DataParallel parallel;
  if (comm.size() == 1) return parallel;
  distributed::HangOptions hang;
  hang.timeout_s = d.hang_timeout_s;
  hang.long_timeout_s = d.root_work_timeout_s;
  comm.watch_for_hangs(hang);
  auto tensors = model.parameters();
  for (const auto& b : model.buffers()) tensors.push_back(b);
  distributed::broadcast_tensors(tensors, comm);
  distributed::verify_replicas(tensors, comm);
  distributed::ReducerOptions options;
  options.bucket_mb = d.bucket_mb;
  options.overlap = d.overlap;
  // CUDA: NCCL when this LibTorch has it (auto) or when asked for; else CUDA-aware MPI when the
  // MPI library says it is (auto) or when asked for (mpi); else host staging.
  const bool cuda = device.is_cuda();
  if (d.backend == DistBackend::kNccl ||
      (cuda && d.backend == DistBackend::kAuto && distributed::nccl_available())) {
    if (!cuda) throw std::runtime_error("dist.backend nccl needs a CUDA device (train.device)");
    parallel.device_collective = distributed::make_nccl_collective(comm, d.hang_timeout_s);
    options.device_collective = parallel.device_collective.get();
  }
  options.device_buffers =
      cuda && (d.backend == DistBackend::kMpi ||
               (d.backend == DistBackend::kAuto && distributed::Communicator::cuda_aware()));
  parallel.reducer =
      std::make_unique<distributed::GradientReducer>(model.parameters(), comm, options);
  const auto sizes = parallel.reducer->bucket_elements();
  if (comm.is_root()) {
    spdlog::info(
        "data parallel: {} ranks ({} on this node), {} gradient buckets (largest {} values), "
        "overlap {}, {}",
        comm.size(), comm.local_size(), sizes.size(), *std::max_element(sizes.begin(), sizes.end()),
        d.overlap ? "on" : "off",
        !cuda                        ? "MPI on host memory"
        : parallel.device_collective ? parallel.device_collective->name()
        : options.device_buffers     ? "CUDA-aware MPI"
                                     : "MPI via pinned host buffers");
  }
  return parallel;
}

}  // namespace nmt::train
