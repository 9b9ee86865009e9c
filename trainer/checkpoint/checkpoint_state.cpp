#include "trainer/checkpoint/checkpoint_state.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <utility>

#include "common/sha256.h"

namespace nmt::checkpoint {
namespace {

constexpr const char* kVocabModelDataset = "/vocab/spm.model";
constexpr const char* kStateChecksum = "state_sha256";

// The root attributes an exact resume depends on, covered by state_sha256 (format 3; the
// log_window_* ones from format 4: an older file has none, and its hash covers those it has). Not
// format_version: a reader decides by it what else to expect.
enum class AttributeType { kInt, kDouble, kText };
constexpr std::pair<const char*, AttributeType> kStateAttributes[] = {
    {"format", AttributeType::kText},
    {"step", AttributeType::kInt},
    {"epoch", AttributeType::kInt},
    {"batch_in_epoch", AttributeType::kInt},
    {"optimizer_step", AttributeType::kInt},
    {"best_valid_nll", AttributeType::kDouble},
    {"validations_without_improvement", AttributeType::kInt},
    {"elapsed_seconds", AttributeType::kDouble},
    {"averaged_from", AttributeType::kInt},
    {"vocab_sha256", AttributeType::kText},
    {"config", AttributeType::kText},
    {"run_uid", AttributeType::kText},
    {"log_window_updates", AttributeType::kInt},
    {"log_window_tgt_tokens", AttributeType::kInt},
    {"log_window_loss_sum", AttributeType::kDouble},
    {"log_window_nll_sum", AttributeType::kDouble},
    {"tgt_tokens", AttributeType::kInt},
};

// The root attributes each format version brought: a file of an older version has none of them,
// one of that version or newer has them all. format_version itself cannot be covered by
// state_sha256 (it tells a reader which attributes there are to hash), so an edited version is
// found out by what the file holds instead.
constexpr std::pair<const char*, std::int64_t> kAttributeSince[] = {
    {"vocab_sha256", 2},        {kStateChecksum, 3},
    {"log_window_updates", 4},  {"log_window_tgt_tokens", 4},
    {"log_window_loss_sum", 4}, {"log_window_nll_sum", 4},
    {"tgt_tokens", 5},
};

// Throws naming `path` when the file's attributes are not those of format `version`.
void check_attributes_of_version(const Hdf5File& h5, const std::string& path,
                                 std::int64_t version) {
  for (const auto& [name, since] : kAttributeSince) {
    const bool has = h5.has_attribute("/", name);
    if (has == (version >= since)) continue;
    throw std::runtime_error(fmt::format(
        "{}: format_version is {}, but the file {} the attribute '{}' of format {} and later: "
        "the format_version attribute was changed after the file was written; the file is "
        "corrupt",
        path, version, has ? "holds" : "lacks", name, since));
  }
}

// SHA-256 of the state attributes present in `h5`, each as "name:type:length:value\n" (integers
// in decimal, doubles as the 16 hex digits of their IEEE-754 bits, text as its bytes), so that
// any reader, h5py included, can recompute it.
std::string state_checksum(const Hdf5File& h5) {
  std::string text;
  for (const auto& [name, type] : kStateAttributes) {
    if (!h5.has_attribute("/", name)) continue;
    std::string value;
    char tag = 't';
    switch (type) {
      case AttributeType::kInt:
        value = std::to_string(h5.int_attribute("/", name));
        tag = 'i';
        break;
      case AttributeType::kDouble: {
        const double number = h5.double_attribute("/", name);
        std::uint64_t bits = 0;
        std::memcpy(&bits, &number, sizeof bits);
        value = fmt::format("{:016x}", bits);
        tag = 'd';
        break;
      }
      case AttributeType::kText:
        value = h5.string_attribute("/", name);
        break;
    }
    text += fmt::format("{}:{}:{}:", name, tag, value.size()) + value + "\n";
  }
  return sha256_hex(text);
}

}  // namespace

void write_state(Hdf5Writer& h5, const TrainingState& s, const RunConfig& config) {
  h5.set_attribute("/", "format", std::string(kCheckpointFormat));
  h5.set_attribute("/", "format_version", kCheckpointFormatVersion);
  h5.set_attribute("/", "step", s.step);
  h5.set_attribute("/", "epoch", s.epoch);
  h5.set_attribute("/", "batch_in_epoch", s.batch_in_epoch);
  h5.set_attribute("/", "best_valid_nll", s.best_valid_nll);
  h5.set_attribute("/", "validations_without_improvement", s.validations_without_improvement);
  h5.set_attribute("/", "elapsed_seconds", s.elapsed_seconds);
  h5.set_attribute("/", "averaged_from", s.averaged_from);
  h5.set_attribute("/", "vocab_sha256", s.vocab_sha256);
  h5.set_attribute("/", "config", to_yaml(config));
  h5.set_attribute("/", "run_uid", s.run_uid);
  h5.set_attribute("/", "log_window_updates", s.window_updates);
  h5.set_attribute("/", "log_window_tgt_tokens", s.window_tgt_tokens);
  h5.set_attribute("/", "log_window_loss_sum", s.window_loss_sum);
  h5.set_attribute("/", "log_window_nll_sum", s.window_nll_sum);
  h5.set_attribute("/", "tgt_tokens", s.tgt_tokens);
  if (!s.vocab_model.empty()) {
    // A mismatch here is a caller's bug; caught now, not as a "corrupt" file at the next load.
    if (sha256_hex(s.vocab_model) != s.vocab_sha256) {
      throw std::logic_error(fmt::format(
          "the SentencePiece model to store has SHA-256 {}, not the state's vocab_sha256 '{}'",
          sha256_hex(s.vocab_model), s.vocab_sha256));
    }
    h5.write_array(kVocabModelDataset, reinterpret_cast<const std::uint8_t*>(s.vocab_model.data()),
                   {static_cast<std::int64_t>(s.vocab_model.size())});
  }
  // Last: every attribute it covers is set by now (optimizer_step by write_optimizer).
  h5.set_attribute("/", kStateChecksum, state_checksum(h5));
}

Hdf5Reader open_checkpoint(const std::string& path) {
  Hdf5Reader h5(path);
  const std::string format = h5.string_attribute("/", "format");
  const std::int64_t version = h5.int_attribute("/", "format_version");
  if (format != kCheckpointFormat || version < kOldestReadableFormatVersion ||
      version > kCheckpointFormatVersion) {
    throw std::runtime_error(fmt::format(
        "{}: not an {} file of version {} to {} (format '{}', version {})", path, kCheckpointFormat,
        kOldestReadableFormatVersion, kCheckpointFormatVersion, format, version));
  }
  check_attributes_of_version(h5, path, version);
  if (h5.has_attribute("/", kStateChecksum)) {
    const std::string stored = h5.string_attribute("/", kStateChecksum);
    const std::string computed = state_checksum(h5);
    if (stored != computed) {
      throw std::runtime_error(fmt::format(
          "{}: the training state attributes (step, epoch, batch_in_epoch, optimizer_step, "
          "config, ...) fail their checksum ({} stored, {} computed): an attribute was changed "
          "after the file was written; the file is corrupt",
          path, kStateChecksum, stored, computed));
    }
  } else if (version >= 3) {
    throw std::runtime_error(
        fmt::format("{}: a format {} checkpoint without its {} attribute: the file is corrupt",
                    path, version, kStateChecksum));
  }
  return h5;
}

bool has_checksums(const Hdf5File& h5) {
  return h5.int_attribute("/", "format_version") >= 2;
}

TrainingState read_state(const Hdf5Reader& h5) {
  TrainingState s;
  s.step = h5.int_attribute("/", "step");
  s.epoch = h5.int_attribute("/", "epoch");
  s.batch_in_epoch = h5.int_attribute("/", "batch_in_epoch");
  s.best_valid_nll = h5.double_attribute("/", "best_valid_nll");
  s.validations_without_improvement = h5.int_attribute("/", "validations_without_improvement");
  s.elapsed_seconds = h5.double_attribute("/", "elapsed_seconds");
  s.averaged_from = h5.int_attribute("/", "averaged_from");
  if (has_checksums(h5)) s.vocab_sha256 = h5.string_attribute("/", "vocab_sha256");
  if (h5.has_attribute("/", "run_uid")) s.run_uid = h5.string_attribute("/", "run_uid");
  if (h5.int_attribute("/", "format_version") >= 4) {
    s.window_updates = h5.int_attribute("/", "log_window_updates");
    s.window_tgt_tokens = h5.int_attribute("/", "log_window_tgt_tokens");
    s.window_loss_sum = h5.double_attribute("/", "log_window_loss_sum");
    s.window_nll_sum = h5.double_attribute("/", "log_window_nll_sum");
  }
  s.tgt_tokens =
      h5.int_attribute("/", "format_version") >= 5 ? h5.int_attribute("/", "tgt_tokens") : -1;
  if (h5.exists(kVocabModelDataset)) {
    const auto bytes = h5.read<std::uint8_t>(kVocabModelDataset);
    s.vocab_model.assign(bytes.begin(), bytes.end());
    const std::string sha = sha256_hex(s.vocab_model);
    if (sha != s.vocab_sha256) {
      throw std::runtime_error(fmt::format(
          "{}: the SentencePiece model stored in the checkpoint ({}) has SHA-256 {}, not the "
          "recorded {}: the file is corrupt",
          h5.path(), kVocabModelDataset, sha, s.vocab_sha256));
    }
  }
  return s;
}

}  // namespace nmt::checkpoint
