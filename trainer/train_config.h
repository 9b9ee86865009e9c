#pragma once
// Everything nmt-train is told, as plain structs with the paper's base recipe as defaults, loaded
// from YAML in exactly one place (load_run_config) and checked by validate(). Nothing below main
// reads files or the environment for settings. The resolved config (to_yaml) is written into the
// run directory and every checkpoint.

#include <cstdint>
#include <string>
#include <vector>

#include "trainer/model/model_config.h"
#include "trainer/runtime/precision_mode.h"

namespace nmt {

struct DataConfig {
  std::string dir;  // an nmt-preprocess output directory
  std::string train_split = "train";
  std::string valid_split = "valid";    // empty: no validation
  std::int64_t max_src_tokens = 25000;  // per batch, padded (the paper: ~25k source tokens)
  std::int64_t max_tgt_tokens = 25000;  // per batch, padded (~25k target tokens)
  std::int64_t max_length = 256;        // longer pairs (either side, with BOS/EOS) are skipped
  std::int64_t bucket_pool = 100;       // batches' worth of pairs sorted by length together
  // Hash every shard against manifest.json when the run opens the data (nmt-preprocess hashed
  // them when it wrote them; `nmt-preprocess --verify DIR` re-checks a copied directory once)
  bool verify_checksums = false;
  void validate() const;
};

struct TrainConfig {
  std::int64_t max_steps = 100000;  // parameter updates (base: 100k; big: 300k)
  // A training-time budget (minutes, over all processes of the run; 0: none): the run ends at the
  // first update past it, as it would at max_steps (last checkpoint, validation), so that a recipe
  // sized for one machine still ends in time on a slower one, with fewer updates.
  double max_minutes = 0.0;
  std::int64_t accumulation = 1;  // batches per update per rank, to reach 25k tokens on fewer
                                  // devices; with update_batches set, derived from it
  // Batches in one update over all ranks: the update's data, and so the sample order, do not
  // depend on the number of ranks (a run requeued on 1, 2 or 4 ranks sees the same updates), and
  // each rank takes update_batches / ranks of them. 0: accumulation x ranks, fixed when a fresh
  // run starts (the resolved value goes into config.yaml and checkpoints; resume keeps it).
  std::int64_t update_batches = 0;
  double lr_factor = 1.0;  // lr = factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)
  std::int64_t warmup_steps = 4000;
  // Not in the paper: the last `cooldown` fraction of the run scales that rate linearly down to 0
  // (trainer/optim/lr_cooldown.h). The run's fraction is of max_steps, or of max_minutes when the
  // time budget runs out first (rank 0's clock: such a run's rates then depend on the machine's
  // speed, as its update count already does). 0: the paper's schedule to the end.
  double cooldown = 0.0;
  double adam_beta1 = 0.9;
  double adam_beta2 = 0.98;
  double adam_eps = 1e-9;
  double label_smoothing = 0.1;  // eps_ls
  double clip_norm = 0.0;        // gradient-norm clipping; 0 disables (the paper has none)
  // Updates in a row skipped for a non-finite gradient norm before training stops with an error
  // (fp16: counted once the loss scale is down to 1)
  std::int64_t max_skipped_updates = 10;
  std::int64_t validate_every = 1000;     // steps; 0 disables
  std::int64_t valid_bleu_every = 0;      // steps between validation BLEU (decoding); 0 disables
  std::int64_t valid_bleu_beam = 1;       // 1: greedy; else beam size (alpha: decode.alpha)
  std::int64_t valid_bleu_sentences = 0;  // first N validation pairs; 0: all
  std::int64_t early_stopping = 0;        // stop after this many validations without improvement
  std::int64_t log_every = 100;           // steps between metric lines
  std::uint64_t seed = 1;                 // parameters, dropout and batch order
  std::string device = "cpu";             // cpu, cuda, cuda:N, auto
  // Several ranks of one node may drive the same GPU (round-robin when a node has more ranks than
  // GPUs); off: each rank needs a GPU of its own (runtime/device_assignment.h)
  bool allow_shared_gpu = false;
  // auto: bf16 where the device runs it natively and faster (GPUs of compute capability 8.0+, CPUs
  // with AMX or AVX512-BF16, found by a short probe), else fp32; or fp32, bf16, fp16 (CUDA only)
  runtime::Precision precision = runtime::Precision::kAuto;
  int threads = 0;  // intra-op CPU threads; 0: LibTorch's default
  void validate() const;
};

struct CheckpointConfig {
  std::int64_t every_steps = 1000;  // 0: only by time and at the end
  double every_minutes = 0.0;       // the paper wrote one every 10 minutes; 0 disables
  std::int64_t keep_last = 5;       // older step checkpoints are deleted
  void validate() const;
};

// How a trained run is turned into translations, chosen on validation data like the rest of the
// recipe: the checkpoints averaged and the beam search's settings. The defaults are the paper's
// base (the last 5 checkpoints, beam 4, alpha 0.6). nmt-average (--run-dir), nmt-translate and
// nmt-evaluate take them from the run's config.yaml or the checkpoint unless told otherwise.
struct DecodeConfig {
  std::int64_t average_last = 5;  // newest checkpoints averaged (the paper's big: 20)
  std::int64_t beam = 4;
  double alpha = 0.6;  // length penalty: log P / ((5 + |Y|) / 6)^alpha
  void validate() const;
};

// How CUDA gradients travel: auto (NCCL when this LibTorch has it, else CUDA-aware MPI when the MPI
// library is, else host staging), mpi (CUDA-aware MPI), mpi-staged (via pinned host buffers), nccl.
// CPU gradients always go through MPI.
enum class DistBackend { kAuto, kMpi, kMpiStaged, kNccl };
DistBackend parse_dist_backend(const std::string& name);  // std::invalid_argument listing choices
const char* dist_backend_name(DistBackend backend);

// Data parallelism over MPI ranks (mpirun / srun). Ignored by a single process.
struct DistConfig {
  DistBackend backend = DistBackend::kAuto;
  double bucket_mb = 25.0;       // gradient bytes fused into one all-reduce
  bool overlap = true;           // start each bucket's all-reduce from the backward pass
  double hang_timeout_s = 45.0;  // a rank waiting this long on a peer aborts the job, naming it
  double root_work_timeout_s = 1800.0;  // the same, while rank 0 alone saves or decodes
  void validate() const;
};

// Where the run is tracked and how it is labelled there. The daemon's address, token and CA file
// are resolved by tracker/client/daemon_address.h: a tool's --tracker-* flags beat these fields,
// which beat the environment (NMT_TRACKER_URL, NMT_TRACKER_TOKEN_FILE, NMT_TRACKER_CA_FILE); none
// of them naming a daemon: no tracking.
struct TrackerConfig {
  std::string url;         // http://HOST:PORT or https://HOST:PORT of an nmt-trackerd
  std::string port_file;   // or the daemon's --port-file (host 127.0.0.1)
  std::string token_file;  // bearer token, when the daemon requires one
  std::string ca_file;     // https: PEM CAs that sign the daemon's certificate; empty: the system's
  std::string experiment = "default";
  std::string run_name;  // empty: the run directory's name
  std::string sweep;     // set by nmt-sweep for the rows of an ablation table
  std::string row_label;
  std::int64_t row_index = -1;
  double ref_ppl = 0, ref_bleu = 0, ref_params = 0;  // a row's reference figures; 0: none
};

struct RunConfig {
  model::ModelConfig model;
  DataConfig data;
  TrainConfig train;
  CheckpointConfig checkpoint;
  DecodeConfig decode;
  DistConfig dist;
  TrackerConfig tracker;
  void validate() const;
};

// Loads `path` (may be empty: all defaults) and applies --set overrides ("model.d_model=256").
// Unknown keys and wrong types are ConfigErrors naming file, line and key.
RunConfig load_run_config(const std::string& path, const std::vector<std::string>& overrides = {});
// Parses YAML text written by to_yaml (the copy inside a checkpoint).
RunConfig parse_run_config(const std::string& yaml, const std::string& source);

std::string to_yaml(const RunConfig& config);
std::string to_yaml(const model::ModelConfig& model);

}  // namespace nmt
