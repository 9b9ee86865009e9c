#include "trainer/runtime/device_assignment.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace nmt::runtime {
namespace {

constexpr const char* kCudaVisibleDevices = "CUDA_VISIBLE_DEVICES";
constexpr const char* kOmpiLocalRank = "OMPI_COMM_WORLD_LOCAL_RANK";
constexpr const char* kOmpiLocalSize = "OMPI_COMM_WORLD_LOCAL_SIZE";
constexpr const char* kSlurmLocalId = "SLURM_LOCALID";
constexpr const char* kSlurmNodeId = "SLURM_NODEID";
constexpr const char* kSlurmStepTasksPerNode = "SLURM_STEP_TASKS_PER_NODE";
constexpr const char* kSlurmNtasksPerNode = "SLURM_NTASKS_PER_NODE";
constexpr const char* kSlurmGpusPerTask = "SLURM_GPUS_PER_TASK";

// A launcher variable that must hold a non-negative count.
int require_count(const char* name, const std::string& value, const std::string& text) {
  const bool digits = !text.empty() && text.size() <= 9 &&
                      text.find_first_not_of("0123456789") == std::string::npos;
  if (!digits) {
    throw std::invalid_argument(
        fmt::format("{}='{}' is not a count the launcher would set (expected a non-negative "
                    "integer): unset it or fix the launch",
                    name, value));
  }
  return std::stoi(text);
}
int require_count(const char* name, const std::string& value) {
  return require_count(name, value, value);
}

// Slurm's compressed tasks-per-node list expanded: "8(x4)" is 8, 8, 8, 8; "2(x3),1" is 2, 2, 2, 1.
std::vector<int> expand_tasks_per_node(const char* name, const std::string& value) {
  std::vector<int> counts;
  std::size_t start = 0;
  while (true) {
    const auto end = value.find(',', start);
    const std::string item = value.substr(start, end == std::string::npos ? end : end - start);
    const auto paren = item.find("(x");
    int repeat = 1;
    if (paren != std::string::npos) {
      if (item.back() != ')') {
        throw std::invalid_argument(fmt::format(
            "{}='{}' is not Slurm's tasks-per-node list (e.g. 8, 8(x4) or 2(x3),1)", name, value));
      }
      repeat = require_count(name, value, item.substr(paren + 2, item.size() - paren - 3));
    }
    counts.insert(counts.end(), static_cast<std::size_t>(repeat),
                  require_count(name, value, item.substr(0, paren)));
    if (end == std::string::npos) return counts;
    start = end + 1;
  }
}

// The tasks Slurm started on this node (its step's, else its job's), or nullopt when the variables
// do not say (unset, or nodes with different counts and no SLURM_NODEID). The job's
// SLURM_NTASKS_PER_NODE is one number for every node; only a list of different counts needs
// SLURM_NODEID to pick this node's.
std::optional<int> slurm_tasks_on_node(const LauncherVariables& v) {
  const bool step = v.slurm_step_tasks_per_node.has_value();
  const auto& value = step ? v.slurm_step_tasks_per_node : v.slurm_ntasks_per_node;
  if (!value) return std::nullopt;
  const char* name = step ? kSlurmStepTasksPerNode : kSlurmNtasksPerNode;
  const auto counts = expand_tasks_per_node(name, *value);
  const bool uniform =
      std::all_of(counts.begin(), counts.end(), [&](int c) { return c == counts.front(); });
  if (uniform) return counts.front();
  if (!v.slurm_nodeid) return std::nullopt;
  const auto node = static_cast<std::size_t>(require_count(kSlurmNodeId, *v.slurm_nodeid));
  if (node >= counts.size()) {
    throw std::invalid_argument(fmt::format("{}={} but {}='{}' lists {} node(s)", kSlurmNodeId,
                                            node, name, *value, counts.size()));
  }
  return counts[node];
}

// This rank's place among its node's ranks. The communicator knows when MPI groups several ranks
// on this node. When it sees this process alone, the launcher's variables may still say it is
// one of several tasks here (srun without a working --mpi plugin starts independent copies):
// their local rank then keeps such copies off each other's GPU.
struct NodeLayout {
  int rank = 0;
  int size = 1;
  const char* source = "MPI";  // who said so
  bool confirmed = true;       // false: a count from the launcher's variables that MPI did not
                               // confirm (MPI sees this process alone)
};

NodeLayout node_layout(const DeviceRequest& r) {
  if (r.local_size > 1) return {r.local_rank, r.local_size, "MPI", true};
  const auto& v = r.launcher;
  // Ranks mpirun started carry its variables; Slurm's there describe the task that ran mpirun.
  if (v.ompi_local_rank || v.ompi_local_size) {
    if (!v.ompi_local_rank || !v.ompi_local_size) return {};
    const int rank = require_count(kOmpiLocalRank, *v.ompi_local_rank);
    const int size = require_count(kOmpiLocalSize, *v.ompi_local_size);
    if (rank >= size) {
      throw std::invalid_argument(
          fmt::format("{}={} is not below {}={}", kOmpiLocalRank, rank, kOmpiLocalSize, size));
    }
    return {rank, size, kOmpiLocalRank, size == 1};
  }
  if (v.slurm_localid) {
    const int rank = require_count(kSlurmLocalId, *v.slurm_localid);
    const int size = std::max(slurm_tasks_on_node(v).value_or(1), rank + 1);
    return {rank, size, kSlurmLocalId, size == 1};
  }
  return {};
}

// Slurm bound `g` GPUs to each task (--gpus-per-task=g, whose default binding is per task): the
// process sees exactly g GPUs, and Slurm's step has as many tasks on this node as there are ranks
// here. The last condition tells srun's tasks (the ranks themselves) from ranks that mpirun started
// inside one Slurm task, which all inherit that task's variables and GPUs.
std::optional<int> slurm_gpus_per_task(const DeviceRequest& r, const NodeLayout& node) {
  const auto& v = r.launcher;
  if (!v.slurm_gpus_per_task) return std::nullopt;
  const std::string& value = *v.slurm_gpus_per_task;  // [type:]count
  const auto colon = value.rfind(':');
  const int g = require_count(kSlurmGpusPerTask, value,
                              colon == std::string::npos ? value : value.substr(colon + 1));
  if (g < 1 || r.visible != g) return std::nullopt;
  if (node.size > 1 && slurm_tasks_on_node(v) != node.size) return std::nullopt;
  return g;
}

std::vector<std::string> visible_list(const LauncherVariables& v) {
  std::vector<std::string> entries;
  if (!v.cuda_visible_devices) return entries;
  std::size_t start = 0;
  while (true) {
    const auto end = v.cuda_visible_devices->find(',', start);
    entries.push_back(
        v.cuda_visible_devices->substr(start, end == std::string::npos ? end : end - start));
    if (end == std::string::npos) return entries;
    start = end + 1;
  }
}

// " (CUDA_VISIBLE_DEVICES=4,5,6,7)", or "" when it is not set.
std::string visible_setting(const LauncherVariables& v) {
  if (!v.cuda_visible_devices) return "";
  return fmt::format(" ({}='{}')", kCudaVisibleDevices, *v.cuda_visible_devices);
}

// Which GPU cuda:index is: " (GPU 5 of CUDA_VISIBLE_DEVICES=4,5,6,7)"; "" without the variable.
std::string physical_gpu(const LauncherVariables& v, int index) {
  const auto entries = visible_list(v);
  if (static_cast<std::size_t>(index) >= entries.size()) return visible_setting(v);
  return fmt::format(" (GPU {} of {}={})", entries[static_cast<std::size_t>(index)],
                     kCudaVisibleDevices, *v.cuda_visible_devices);
}

DeviceAssignment explicit_index(const DeviceRequest& r, const NodeLayout& node) {
  const int index = *r.index;
  if (node.size == 1 || !node.confirmed) {
    return {index, false,
            fmt::format("train.device cuda:{}, of {} visible GPU(s){}", index, r.visible,
                        physical_gpu(r.launcher, index))};
  }
  if (!r.allow_shared) {
    throw std::invalid_argument(fmt::format(
        "train.device cuda:{} puts all {} ranks of this node on one GPU: use train.device cuda "
        "(--device cuda: local rank i takes cuda:i), or share on purpose with "
        "train.allow_shared_gpu: true (--allow-shared-gpu)",
        index, node.size));
  }
  return {index, true,
          fmt::format("train.device cuda:{} for all {} ranks of this node, shared as "
                      "train.allow_shared_gpu allows{}",
                      index, node.size, physical_gpu(r.launcher, index))};
}

DeviceAssignment round_robin(const DeviceRequest& r, const NodeLayout& node) {
  const int index = node.rank % r.visible;
  std::vector<int> others;
  for (int k = index; k < node.size; k += r.visible) {
    if (k != node.rank) others.push_back(k);
  }
  return {index, !others.empty(),
          fmt::format("{} ranks on this node ({}) share {} visible GPU(s) round-robin, as "
                      "train.allow_shared_gpu allows: local rank {} takes cuda:{}{}, with local "
                      "rank(s) {}",
                      node.size, node.source, r.visible, node.rank, index,
                      physical_gpu(r.launcher, index), fmt::join(others, ", "))};
}

std::invalid_argument too_many_ranks(const DeviceRequest& r, const NodeLayout& node) {
  std::string hint;
  if (r.launcher.slurm_gpus_per_task) {
    const auto tasks = slurm_tasks_on_node(r.launcher);
    hint = tasks ? fmt::format(
                       " ({}={} binds GPUs to Slurm's {} task(s) on this node, not to these "
                       "{} ranks: ranks that mpirun starts inside an allocation share "
                       "their task's GPUs; start them with srun)",
                       kSlurmGpusPerTask, *r.launcher.slurm_gpus_per_task, *tasks, node.size)
                 : fmt::format(
                       " ({}={}, but neither {} nor {} says how many tasks Slurm "
                       "started on this node)",
                       kSlurmGpusPerTask, *r.launcher.slurm_gpus_per_task, kSlurmStepTasksPerNode,
                       kSlurmNtasksPerNode);
  }
  return std::invalid_argument(fmt::format(
      "local rank {}: {} ranks on this node ({}) but {} GPU(s) visible{}, so two ranks would "
      "share a GPU{}. Start at most {} rank(s) per node, one GPU each (srun --ntasks-per-node={} "
      "--gpus-per-task=1, or mpirun --map-by ppr:{}:node), or share on purpose with "
      "train.allow_shared_gpu: true (--allow-shared-gpu)",
      node.rank, node.size, node.source, r.visible, visible_setting(r.launcher), hint, r.visible,
      r.visible, r.visible));
}

}  // namespace

LauncherVariables read_launcher_variables(const std::function<const char*(const char*)>& lookup) {
  const auto get = [&](const char* name) -> std::optional<std::string> {
    const char* value = lookup(name);
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
  LauncherVariables v;
  v.cuda_visible_devices = get(kCudaVisibleDevices);
  v.ompi_local_rank = get(kOmpiLocalRank);
  v.ompi_local_size = get(kOmpiLocalSize);
  v.slurm_localid = get(kSlurmLocalId);
  v.slurm_nodeid = get(kSlurmNodeId);
  v.slurm_step_tasks_per_node = get(kSlurmStepTasksPerNode);
  v.slurm_ntasks_per_node = get(kSlurmNtasksPerNode);
  v.slurm_gpus_per_task = get(kSlurmGpusPerTask);
  return v;
}

DeviceAssignment assign_device(const DeviceRequest& r) {
  if (r.local_size < 1 || r.local_rank < 0 || r.local_rank >= r.local_size) {
    throw std::invalid_argument(
        fmt::format("local rank {} of {}: not a rank of a node's {} rank(s)", r.local_rank,
                    r.local_size, r.local_size));
  }
  if (r.visible < 1) {
    throw std::invalid_argument(
        fmt::format("no GPU is visible to this process{}: ask the scheduler for GPUs (srun "
                    "--gpus-per-task=1 or --gpus-per-node=N), or train on the CPU (--device cpu)",
                    visible_setting(r.launcher)));
  }
  if (r.index && (*r.index < 0 || *r.index >= r.visible)) {
    throw std::invalid_argument(fmt::format("train.device cuda:{} but {} GPU(s) are visible{}",
                                            *r.index, r.visible, visible_setting(r.launcher)));
  }
  const NodeLayout node = node_layout(r);
  if (const auto g = slurm_gpus_per_task(r, node)) {
    const int index = r.index.value_or(0);
    return {index, false,
            fmt::format("Slurm gives each of this node's {} task(s) its own {} GPU(s) ({}={}): "
                        "local rank {} takes cuda:{}{}",
                        node.size, *g, kSlurmGpusPerTask, *r.launcher.slurm_gpus_per_task,
                        node.rank, index, physical_gpu(r.launcher, index))};
  }
  if (r.index) return explicit_index(r, node);
  // A launcher's count that MPI did not confirm is not trusted to refuse a start: only a local
  // rank beyond the GPUs is.
  if (node.rank < r.visible && (node.size <= r.visible || !node.confirmed)) {
    const std::string who =
        node.size == 1 ? std::string("the only rank on this node")
                       : fmt::format("local rank {} of {} ({})", node.rank, node.size, node.source);
    return {node.rank, false,
            fmt::format("{} takes cuda:{} of {} visible GPU(s){}{}", who, node.rank, r.visible,
                        physical_gpu(r.launcher, node.rank),
                        node.confirmed ? "" : "; MPI sees this process alone")};
  }
  if (r.allow_shared) return round_robin(r, node);
  throw too_many_ranks(r, node);
}

}  // namespace nmt::runtime
