#pragma once
// Which GPU a rank drives. Data parallelism runs one rank per GPU, so the ranks of one node must
// take distinct GPUs; which index that is depends on how the job was launched:
//   - Slurm binding GPUs per task (--gpus-per-task=1): each rank sees its own GPU, as cuda:0;
//   - GPUs per node (--gpus-per-node=8, mpirun on a GPU machine): every rank of the node sees all
//     of them, and local rank i takes cuda:i;
//   - CUDA_VISIBLE_DEVICES set by the site ("4,5,6,7"): the same, among the listed GPUs;
//   - more ranks than GPUs on a node: an error naming the numbers, unless sharing is allowed
//     (train.allow_shared_gpu), then round-robin.
// Pure: the inputs are what the process sees (its communicator's local rank and size, the
// launcher's variables, the GPU count CUDA reports), read by the caller. No LibTorch, no MPI, no
// environment reads, so every layout is a unit test (tests/device_assignment_test.cpp).

#include <functional>
#include <optional>
#include <string>

namespace nmt::runtime {

// The launcher's variables as the process found them (nullopt: not set).
struct LauncherVariables {
  std::optional<std::string> cuda_visible_devices;  // CUDA_VISIBLE_DEVICES
  std::optional<std::string> ompi_local_rank;       // OMPI_COMM_WORLD_LOCAL_RANK (mpirun)
  std::optional<std::string> ompi_local_size;       // OMPI_COMM_WORLD_LOCAL_SIZE
  std::optional<std::string> slurm_localid;         // SLURM_LOCALID (srun)
  std::optional<std::string> slurm_nodeid;          // SLURM_NODEID: this node in the lists below
  std::optional<std::string> slurm_step_tasks_per_node;  // SLURM_STEP_TASKS_PER_NODE, "8(x4)"
  std::optional<std::string> slurm_ntasks_per_node;      // SLURM_NTASKS_PER_NODE (the job's)
  std::optional<std::string> slurm_gpus_per_task;        // SLURM_GPUS_PER_TASK, "1" or "a100:1"
};

// The variables above through `lookup` (nmt-train passes std::getenv; tests a map).
LauncherVariables read_launcher_variables(const std::function<const char*(const char*)>& lookup);

struct DeviceRequest {
  int local_rank = 0;         // this rank among its node's ranks (the communicator's)
  int local_size = 1;         // ranks on this node; 1 when MPI sees this process alone
  int visible = 0;            // GPUs CUDA shows this process (after CUDA_VISIBLE_DEVICES)
  std::optional<int> index;   // an explicit train.device cuda:N; nullopt for cuda or auto
  bool allow_shared = false;  // train.allow_shared_gpu: several local ranks may drive one GPU
  LauncherVariables launcher;
};

struct DeviceAssignment {
  int index = 0;        // the rank's GPU: cuda:index among the visible ones
  bool shared = false;  // other ranks of this node drive it too (only with allow_shared)
  std::string reason;   // one line: the layout recognised and why this GPU
};

// The GPU of the rank described by `request`. Two ranks of one node never get the same GPU
// unless request.allow_shared. Throws std::invalid_argument, naming the numbers and what to
// change, when no GPU is visible, when the node has more ranks than GPUs (or an explicit cuda:N
// would put all of them on one) without allow_shared, when cuda:N is not visible, or when a
// launcher variable it needs is malformed (naming the variable).
DeviceAssignment assign_device(const DeviceRequest& request);

}  // namespace nmt::runtime
