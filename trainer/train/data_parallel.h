#pragma once
// One rank of a data-parallel job: the device it trains on, and its link to the other ranks (hang
// detection, rank 0's initial parameters everywhere, checked, and the gradient reducer). Dropout
// needs nothing per rank: each micro-batch seeds it from its place in the update.

#include <c10/core/Device.h>
#include <torch/nn/module.h>

#include <memory>

#include "trainer/config/train_config.h"
#include "trainer/distributed/communicator.h"
#include "trainer/distributed/device_collective.h"
#include "trainer/distributed/gradient_reducer.h"
#include "trainer/runtime/device_assignment.h"

namespace nmt::train {

// This rank's device, logged by every rank with its host and the reason. A CUDA device goes
// through runtime::assign_device: the node's ranks take distinct GPUs (cuda:i for local rank i,
// cuda:0 where Slurm binds one per task), unless train.allow_shared_gpu lets them share.
c10::Device choose_device(const TrainConfig& t, const distributed::Communicator& comm,
                          const runtime::LauncherVariables& launcher);

struct DataParallel {
  std::unique_ptr<distributed::DeviceCollective> device_collective;  // NCCL, on CUDA when available
  std::unique_ptr<distributed::GradientReducer> reducer;             // with several ranks
};

// Joins `model` on `device` to the job of `comm` (a collective; nothing with one rank).
DataParallel join_data_parallel(torch::nn::Module& model, const DistConfig& d,
                                const c10::Device& device, distributed::Communicator& comm);

}  // namespace nmt::train
