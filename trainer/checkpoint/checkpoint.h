#pragma once
// The checkpoint format, defined here only (writer and reader). One HDF5 file, readable by h5py:
//   /model/<state-dict name>            float32, the parameter's shape
//                                       ("encoder.layers.0.ffn.linear1.weight")
//   /optimizer/<name>/exp_avg           float32, Adam's first moment (absent in averages)
//   /optimizer/<name>/exp_avg_sq        float32, Adam's second moment
//   /rng/cpu, /rng/cuda                 uint8, generator states (restored; training no longer
//                                       needs them: dropout is seeded per micro-batch)
//   attribute "crc32" on each of those datasets: the CRC-32 of its values as stored
//   /vocab/spm.model                    uint8, the SentencePiece model the run was trained with
//                                       (its serialized proto, whose SHA-256 is vocab_sha256), so
//                                       that a checkpoint translates on its own; optional
//   attributes on "/": format "nmt-checkpoint", format_version, step, epoch, batch_in_epoch,
//   optimizer_step, best_valid_nll, validations_without_improvement, elapsed_seconds,
//   averaged_from (0, or how many checkpoints were averaged), vocab_sha256 (the SentencePiece
//   model the run was trained with, as in the shards' manifest), config (the resolved YAML),
//   run_uid (the run directory's run.json uid; empty when written outside a run),
//   log_window_updates, log_window_tgt_tokens, log_window_loss_sum, log_window_nll_sum (the
//   train/* log window open at the step, over all ranks), tgt_tokens (target tokens trained up to
//   the last log step), and state_sha256: the SHA-256 of all those but format_version, so that a
//   changed step or config is refused like a flipped bit (the text hashed: checkpoint_state.cpp,
//   state_checksum)
// Written in memory bounded by one tensor, whatever the checkpoint's size: HDF5 lays out the file
// in memory (metadata only; the tensors' datasets reserved, contiguous), then the file is written
// to a temporary name with checked writes, each tensor's bytes straight from its memory, fsynced
// and renamed: a checkpoint is complete or absent, and a full disk is an error naming the file and
// the cause that leaves HDF5 and the process sound. Read tensor by tensor likewise, through one
// CheckpointReader per file.
// Nothing non-finite is written, and loading verifies every tensor's checksum and finiteness: a
// flipped bit or a NaN is an error naming the file and the tensor, and every open verifies
// state_sha256.
// Files of the formats before this one still load, read as this one where they open
// (checkpoint_state.cpp: which attributes each version brought, and what a file without them
// reads as); no caller knows a checkpoint's version.

#include <torch/nn/module.h>
#include <torch/optim/adam.h>

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "trainer/checkpoint/checkpoint_files.h"
#include "trainer/config/train_config.h"

namespace nmt {
class Hdf5Reader;
}

namespace nmt::checkpoint {

inline constexpr const char* kCheckpointFormat = "nmt-checkpoint";
inline constexpr std::int64_t kCheckpointFormatVersion = 5;
inline constexpr std::int64_t kOldestReadableFormatVersion = 1;

// Where training stands; with the parameters, the optimizer and the config (its update size and
// seed) it is everything an exact resume needs.
struct TrainingState {
  std::int64_t step = 0;            // parameter updates done
  std::int64_t epoch = 0;           // epoch of the next update's first batch
  std::int64_t batch_in_epoch = 0;  // its index in that epoch's plan
  double best_valid_nll = std::numeric_limits<double>::infinity();  // per target token
  std::int64_t validations_without_improvement = 0;
  double elapsed_seconds = 0.0;    // training time before this checkpoint
  std::int64_t averaged_from = 0;  // > 0 for an nmt-average output
  std::string vocab_sha256;        // of the SentencePiece model; empty: unknown
  // The SentencePiece model itself (serialized proto); empty when the file has none. Verified
  // against vocab_sha256 on read.
  std::string vocab_model;
  std::string run_uid;  // the run that wrote it (run_identity.h); empty: none recorded
  // The updates since the last train/* log step (update_log.h), over all ranks: how many, their
  // target tokens and their summed label-smoothed loss and nll. All 0 at a log step and in
  // averages.
  std::int64_t window_updates = 0, window_tgt_tokens = 0;
  double window_loss_sum = 0.0, window_nll_sum = 0.0;
  // Target tokens of the updates trained up to the last log step (the train/tokens metric; the
  // open window's are in window_tgt_tokens); -1: unknown.
  std::int64_t tgt_tokens = 0;
};

// Saves `model` (and `optimizer`, may be null) with the RNG states, atomically. Refuses, naming
// the tensor, to write a non-finite value.
void save_checkpoint(const std::string& path, const torch::nn::Module& model,
                     const torch::optim::Adam* optimizer, const TrainingState& state,
                     const RunConfig& config);

// Receives parameter `index` (in `like.named_parameters()` order) as stored: a float32 host
// tensor of its shape, verified, which the receiver may keep or overwrite.
using ParameterUse = std::function<void(std::size_t index, at::Tensor stored)>;

// One checkpoint file, opened once: its format checked (format, version, the attributes of that
// version, state_sha256) and its training state and config read, as this format's whatever the
// file's version. Throws naming the file when it is not a readable checkpoint.
class CheckpointReader {
 public:
  explicit CheckpointReader(const std::string& path);
  ~CheckpointReader();
  CheckpointReader(CheckpointReader&&) noexcept;
  CheckpointReader& operator=(CheckpointReader&&) noexcept;

  const std::string& path() const { return path_; }
  const TrainingState& state() const { return state_; }
  // The config the checkpoint was trained with (or, for an average, the newest input's).
  const RunConfig& config() const { return config_; }

  // Loads the parameters into `model` (built from `expected`), and when `optimizer` is given its
  // state and the RNG states. Refuses, naming the file and the differing keys, a checkpoint whose
  // model config differs from `expected.model`, a truncated or corrupt file, a tensor whose
  // checksum does not match and a non-finite value (each naming the file and the tensor).
  void load(torch::nn::Module& model, torch::optim::Adam* optimizer,
            const RunConfig& expected) const;
  // Reads the parameters one at a time, with load's checks, and hands each to `use`: memory
  // holds one stored tensor at a time.
  void read_parameters(const torch::nn::Module& like, const RunConfig& expected,
                       const ParameterUse& use) const;

 private:
  std::string path_;
  std::unique_ptr<Hdf5Reader> h5_;
  TrainingState state_;
  RunConfig config_;
};

// Loads `path` into `model` and `optimizer` (CheckpointReader::load) and returns its state.
TrainingState load_checkpoint(const std::string& path, torch::nn::Module& model,
                              torch::optim::Adam* optimizer, const RunConfig& expected);

// Refuses (std::runtime_error naming both hashes) to use the checkpoint at `path` with a
// vocabulary other than the one it was trained with; `vocab_name` names the vocabulary's file in
// the message. A checkpoint that records no hash (the oldest format's): a warning.
void check_vocabulary(const std::string& path, const TrainingState& state,
                      const std::string& vocab_sha256, const std::string& vocab_name);

// Model config keys whose values differ ("d_model: 512 vs 256"); empty when equal.
std::vector<std::string> model_config_differences(const model::ModelConfig& a,
                                                  const model::ModelConfig& b);

}  // namespace nmt::checkpoint
