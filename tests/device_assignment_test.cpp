// The GPU each rank of a node takes, for every launcher layout a cluster uses: Slurm binding GPUs
// per task or per node, a site's CUDA_VISIBLE_DEVICES, mpirun's and srun's local-rank variables,
// more ranks than GPUs (refused unless sharing is allowed), and explicit cuda:N requests.

#include "trainer/runtime/device_assignment.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "test_utils.h"

namespace nmt::runtime {
namespace {

// One rank as its MPI communicator sees it, on a node with `visible` GPUs, with the
// CUDA_VISIBLE_DEVICES it was started with, if any.
DeviceRequest rank(int local_rank, int local_size, int visible,
                   std::optional<std::string> cuda_visible_devices = std::nullopt) {
  DeviceRequest r;
  r.local_rank = local_rank;
  r.local_size = local_size;
  r.visible = visible;
  r.launcher.cuda_visible_devices = std::move(cuda_visible_devices);
  return r;
}

// srun's variables for task `local_id` of a step with `tasks_per_node` tasks on each node.
LauncherVariables srun_task(int local_id, const std::string& tasks_per_node) {
  LauncherVariables v;
  v.slurm_localid = std::to_string(local_id);
  v.slurm_nodeid = "0";
  v.slurm_step_tasks_per_node = tasks_per_node;
  return v;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(DeviceAssignment, OneProcessTakesTheFirstGpu) {
  const auto a = assign_device(rank(0, 1, 8));
  EXPECT_EQ(a.index, 0);
  EXPECT_FALSE(a.shared);
  EXPECT_TRUE(contains(a.reason, "the only rank on this node takes cuda:0 of 8")) << a.reason;
}

// sbatch --ntasks-per-node=8 --gpus-per-task=1, srun --mpi=pmix: Slurm gives every task its own
// GPU, which the task sees as cuda:0.
TEST(DeviceAssignment, GpusPerTaskGiveEveryRankItsOwnCuda0) {
  for (int i = 0; i < 8; ++i) {
    auto r = rank(i, 8, 1);
    r.launcher = srun_task(i, "8(x4)");
    r.launcher.slurm_nodeid = "2";
    r.launcher.slurm_gpus_per_task = "1";
    r.launcher.cuda_visible_devices = std::to_string(i);
    const auto a = assign_device(r);
    EXPECT_EQ(a.index, 0) << a.reason;
    EXPECT_FALSE(a.shared);
    EXPECT_TRUE(contains(a.reason, "SLURM_GPUS_PER_TASK=1")) << a.reason;
    EXPECT_TRUE(contains(a.reason, "GPU " + std::to_string(i) + " of CUDA_VISIBLE_DEVICES"))
        << a.reason;
  }
  // Only the job's one-number SLURM_NTASKS_PER_NODE, on the fourth node.
  auto job = rank(2, 8, 1);
  job.launcher.slurm_ntasks_per_node = "8";
  job.launcher.slurm_nodeid = "3";
  job.launcher.slurm_gpus_per_task = "1";
  EXPECT_EQ(assign_device(job).index, 0);
  EXPECT_FALSE(assign_device(job).shared);
  auto typed = rank(3, 8, 1);  // --gpus-per-task=a100:1
  typed.launcher = srun_task(3, "8");
  typed.launcher.slurm_gpus_per_task = "a100:1";
  EXPECT_EQ(assign_device(typed).index, 0);
}

// --gpus-per-node=8 (or mpirun on an 8-GPU machine): every rank sees all eight; local rank i
// takes cuda:i, so no two ranks share one.
TEST(DeviceAssignment, GpusPerNodeMapLocalRankIToCudaI) {
  std::set<int> taken;
  for (int i = 0; i < 8; ++i) {
    auto r = rank(i, 8, 8);
    r.launcher = srun_task(i, "8(x2)");
    const auto a = assign_device(r);
    EXPECT_EQ(a.index, i);
    EXPECT_TRUE(contains(a.reason, "local rank " + std::to_string(i) + " of 8 (MPI)")) << a.reason;
    taken.insert(a.index);
  }
  EXPECT_EQ(taken.size(), 8u);
  // Per-task GPUs without Slurm's per-task binding (--gpu-bind=none): all eight are visible.
  auto unbound = rank(5, 8, 8);
  unbound.launcher = srun_task(5, "8");
  unbound.launcher.slurm_gpus_per_task = "1";
  EXPECT_EQ(assign_device(unbound).index, 5);
}

TEST(DeviceAssignment, SiteCudaVisibleDevicesAreIndexedInOrder) {
  for (int i = 0; i < 4; ++i) {
    const auto a = assign_device(rank(i, 4, 4, "4,5,6,7"));
    EXPECT_EQ(a.index, i);
    EXPECT_TRUE(contains(a.reason, "GPU " + std::to_string(4 + i) + " of CUDA_VISIBLE_DEVICES"))
        << a.reason;
  }
}

TEST(DeviceAssignment, MoreRanksThanGpusIsAnErrorNamingTheNumbers) {
  auto r = rank(9, 16, 8);
  NMT_EXPECT_THROW_WITH(assign_device(r), std::invalid_argument, "local rank 9",
                        "16 ranks on this node", "8 GPU(s) visible", "train.allow_shared_gpu",
                        "--allow-shared-gpu", "--ntasks-per-node=8");
  // mpirun -np 2 on a machine with one GPU: both would drive it.
  NMT_EXPECT_THROW_WITH(assign_device(rank(0, 2, 1)), std::invalid_argument, "2 ranks on this node",
                        "1 GPU(s) visible");
  NMT_EXPECT_THROW_WITH(assign_device(rank(0, 4, 2, "2,3")), std::invalid_argument,
                        "CUDA_VISIBLE_DEVICES='2,3'");
}

TEST(DeviceAssignment, SharingWhenAllowedIsRoundRobinAndSaysSo) {
  std::map<int, int> ranks_per_gpu;
  for (int i = 0; i < 16; ++i) {
    auto r = rank(i, 16, 8);
    r.allow_shared = true;
    const auto a = assign_device(r);
    EXPECT_EQ(a.index, i % 8);
    EXPECT_TRUE(a.shared);
    EXPECT_TRUE(contains(a.reason, "round-robin")) << a.reason;
    ++ranks_per_gpu[a.index];
  }
  for (const auto& [gpu, count] : ranks_per_gpu) EXPECT_EQ(count, 2) << "cuda:" << gpu;
  auto r = rank(9, 16, 8);
  r.allow_shared = true;
  EXPECT_TRUE(contains(assign_device(r).reason, "with local rank(s) 1")) << assign_device(r).reason;
  // Allowed but not needed: ranks still take distinct GPUs and nothing is shared.
  auto roomy = rank(3, 4, 8);
  roomy.allow_shared = true;
  EXPECT_EQ(assign_device(roomy).index, 3);
  EXPECT_FALSE(assign_device(roomy).shared);
}

// mpirun inside a Slurm allocation: the ranks inherit the variables of the one Slurm task that
// started Open MPI's daemon on their node (SLURM_LOCALID=0, one step task per node).
TEST(DeviceAssignment, MpirunInsideSlurmFollowsMpiNotTheDaemonsTask) {
  auto r = rank(5, 8, 8);
  r.launcher = srun_task(0, "1(x2)");
  r.launcher.ompi_local_rank = "5";
  r.launcher.ompi_local_size = "8";
  EXPECT_EQ(assign_device(r).index, 5);
  // That daemon's task was bound to one GPU: its eight ranks would all drive it.
  auto bound = rank(5, 8, 1);
  bound.launcher = srun_task(0, "1(x2)");
  bound.launcher.slurm_gpus_per_task = "1";
  NMT_EXPECT_THROW_WITH(assign_device(bound), std::invalid_argument, "8 ranks on this node",
                        "Slurm's 1 task(s) on this node", "start them with srun");
}

// MPI sees this process alone, but the launcher says it is one of several on the node (srun
// without a working --mpi plugin starts independent copies): its local rank keeps them apart.
TEST(DeviceAssignment, LauncherLocalRankWhenMpiSeesOneProcess) {
  auto ompi = rank(0, 1, 4);
  ompi.launcher.ompi_local_rank = "3";
  ompi.launcher.ompi_local_size = "4";
  auto a = assign_device(ompi);
  EXPECT_EQ(a.index, 3);
  EXPECT_TRUE(contains(a.reason, "OMPI_COMM_WORLD_LOCAL_RANK")) << a.reason;
  EXPECT_TRUE(contains(a.reason, "MPI sees this process alone")) << a.reason;

  auto slurm = rank(0, 1, 4);
  slurm.launcher = srun_task(2, "4");
  EXPECT_EQ(assign_device(slurm).index, 2);

  // A batch script running one nmt-train in an allocation of 8 tasks per node and one GPU:
  // the job's task count alone does not refuse the start.
  auto batch = rank(0, 1, 1);
  batch.launcher.slurm_localid = "0";
  batch.launcher.slurm_ntasks_per_node = "8";
  EXPECT_EQ(assign_device(batch).index, 0);
  // A local rank beyond the GPUs is refused (or shares, when allowed).
  auto beyond = rank(0, 1, 2);
  beyond.launcher = srun_task(3, "4");
  NMT_EXPECT_THROW_WITH(assign_device(beyond), std::invalid_argument, "local rank 3",
                        "SLURM_LOCALID");
  beyond.allow_shared = true;
  EXPECT_EQ(assign_device(beyond).index, 1);
}

TEST(DeviceAssignment, ExplicitIndex) {
  auto one = rank(0, 1, 8);
  one.index = 3;
  EXPECT_EQ(assign_device(one).index, 3);
  EXPECT_TRUE(contains(assign_device(one).reason, "train.device cuda:3"));

  one.index = 8;
  NMT_EXPECT_THROW_WITH(assign_device(one), std::invalid_argument, "cuda:8", "8 GPU(s)");

  // The same cuda:N for every rank of a node is sharing.
  auto many = rank(1, 2, 8);
  many.index = 3;
  NMT_EXPECT_THROW_WITH(assign_device(many), std::invalid_argument, "cuda:3", "all 2 ranks",
                        "--device cuda", "train.allow_shared_gpu");
  many.allow_shared = true;
  EXPECT_EQ(assign_device(many).index, 3);
  EXPECT_TRUE(assign_device(many).shared);

  // cuda:0 among a task's own GPUs is its own.
  auto task = rank(4, 8, 1);
  task.index = 0;
  task.launcher = srun_task(4, "8");
  task.launcher.slurm_gpus_per_task = "1";
  EXPECT_EQ(assign_device(task).index, 0);
  EXPECT_FALSE(assign_device(task).shared);
}

TEST(DeviceAssignment, NoVisibleGpuIsAnError) {
  NMT_EXPECT_THROW_WITH(assign_device(rank(0, 1, 0)), std::invalid_argument, "no GPU is visible",
                        "--device cpu");
  NMT_EXPECT_THROW_WITH(assign_device(rank(0, 1, 0, "")), std::invalid_argument,
                        "CUDA_VISIBLE_DEVICES=''");
}

TEST(DeviceAssignment, MalformedLauncherVariablesAreNamed) {
  auto r = rank(0, 1, 4);
  r.launcher.ompi_local_rank = "x";
  r.launcher.ompi_local_size = "4";
  NMT_EXPECT_THROW_WITH(assign_device(r), std::invalid_argument, "OMPI_COMM_WORLD_LOCAL_RANK='x'");

  auto gpus = rank(0, 2, 1);
  gpus.launcher = srun_task(0, "2");
  gpus.launcher.slurm_gpus_per_task = "gpu:one";
  NMT_EXPECT_THROW_WITH(assign_device(gpus), std::invalid_argument,
                        "SLURM_GPUS_PER_TASK='gpu:one'");

  auto list = rank(0, 2, 1);
  list.launcher = srun_task(0, "2(x");
  list.launcher.slurm_gpus_per_task = "1";
  NMT_EXPECT_THROW_WITH(assign_device(list), std::invalid_argument, "SLURM_STEP_TASKS_PER_NODE");

  auto node = rank(0, 2, 1);
  node.launcher = srun_task(0, "2(x3),1");
  node.launcher.slurm_nodeid = "4";
  node.launcher.slurm_gpus_per_task = "1";
  NMT_EXPECT_THROW_WITH(assign_device(node), std::invalid_argument, "SLURM_NODEID=4",
                        "lists 4 node(s)");
}

// Nodes with different task counts ("2(x3),1"): SLURM_NODEID picks this node's.
TEST(DeviceAssignment, UnevenTasksPerNodeUseThisNodesCount) {
  auto last = rank(0, 1, 1);
  last.launcher = srun_task(0, "2(x3),1");
  last.launcher.slurm_nodeid = "3";
  last.launcher.slurm_gpus_per_task = "1";
  EXPECT_TRUE(contains(assign_device(last).reason, "Slurm gives each of this node's 1 task(s)"));
  auto first = rank(1, 2, 1);
  first.launcher = srun_task(1, "2(x3),1");
  first.launcher.slurm_nodeid = "1";
  first.launcher.slurm_gpus_per_task = "1";
  EXPECT_EQ(assign_device(first).index, 0);
  EXPECT_FALSE(assign_device(first).shared);
}

TEST(DeviceAssignment, ReadsTheLauncherVariablesByName) {
  const std::map<std::string, std::string> environment = {{"CUDA_VISIBLE_DEVICES", "4,5"},
                                                          {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                                          {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                                                          {"SLURM_LOCALID", "1"},
                                                          {"SLURM_NODEID", "0"},
                                                          {"SLURM_STEP_TASKS_PER_NODE", "2"},
                                                          {"SLURM_GPUS_PER_TASK", "1"}};
  const auto v = read_launcher_variables([&](const char* name) -> const char* {
    const auto found = environment.find(name);
    return found == environment.end() ? nullptr : found->second.c_str();
  });
  EXPECT_EQ(v.cuda_visible_devices, "4,5");
  EXPECT_EQ(v.ompi_local_rank, "1");
  EXPECT_EQ(v.ompi_local_size, "2");
  EXPECT_EQ(v.slurm_localid, "1");
  EXPECT_EQ(v.slurm_nodeid, "0");
  EXPECT_EQ(v.slurm_step_tasks_per_node, "2");
  EXPECT_FALSE(v.slurm_ntasks_per_node.has_value());
  EXPECT_EQ(v.slurm_gpus_per_task, "1");
}

}  // namespace
}  // namespace nmt::runtime
