#include "trainer/checkpoint/checkpoint_vocabulary.h"

#include <fmt/format.h>

#include <filesystem>
#include <stdexcept>

#include "preprocess/shard_format.h"

namespace nmt::checkpoint {

preprocess::Vocabulary checkpoint_vocabulary(const std::string& checkpoint,
                                             const TrainingState& state, const RunConfig& config,
                                             const VocabularySource& source) {
  std::string name;
  auto vocab = [&] {
    if (!source.spm_model.empty()) {
      name = source.spm_model;
      return preprocess::Vocabulary::load(source.spm_model);
    }
    if (!state.vocab_model.empty()) {
      name = checkpoint + " (its SentencePiece model)";
      return preprocess::Vocabulary::from_serialized(state.vocab_model, name);
    }
    const std::string dir = source.data_dir.empty() ? config.data.dir : source.data_dir;
    name = (std::filesystem::path(dir) / preprocess::kVocabularyFile).string();
    if (dir.empty() || !std::filesystem::exists(name)) {
      throw std::runtime_error(
          fmt::format("{} carries no SentencePiece model and its data folder '{}' has none: pass "
                      "--spm-model",
                      checkpoint, dir));
    }
    return preprocess::Vocabulary::load(name);
  }();
  check_vocabulary(checkpoint, state, vocab.sha256(), name);
  if (vocab.size() != config.model.vocab_size) {
    throw std::runtime_error(fmt::format("{} has {} pieces but {} was trained with {}", name,
                                         vocab.size(), checkpoint, config.model.vocab_size));
  }
  return vocab;
}

}  // namespace nmt::checkpoint
