#include "preprocess/vocabulary.h"

#include "common/sha256.h"

#include <fmt/format.h>
#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

namespace nmt::preprocess {
namespace {

// Feeds in-memory sentences to the SentencePiece trainer (no temporary text file).
class VectorIterator : public sentencepiece::SentenceIterator {
 public:
  explicit VectorIterator(const std::vector<std::string>& sentences) : sentences_(sentences) {}
  bool done() const override { return index_ >= sentences_.size(); }
  void Next() override { ++index_; }
  const std::string& value() const override { return sentences_[index_]; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  const std::vector<std::string>& sentences_;
  std::size_t index_ = 0;
};

}  // namespace

void VocabularyOptions::validate() const {
  if (model_type != "bpe" && model_type != "unigram") {
    throw std::invalid_argument("vocabulary model_type must be 'bpe' or 'unigram', got '" +
                                model_type + "'");
  }
  if (vocab_size < 8) throw std::invalid_argument("vocab_size must be at least 8");
  if (character_coverage <= 0.0 || character_coverage > 1.0) {
    throw std::invalid_argument("character_coverage must be in (0, 1]");
  }
  if (max_sentences < 1) throw std::invalid_argument("max_sentences must be positive");
  if (threads < 1) throw std::invalid_argument("threads must be positive");
}

std::string train_vocabulary(const std::vector<std::string>& sentences,
                             const VocabularyOptions& options) {
  options.validate();
  if (sentences.empty()) throw std::invalid_argument("cannot train a vocabulary on no sentences");
  const std::unordered_map<std::string, std::string> args = {
      {"model_type", options.model_type},
      {"vocab_size", std::to_string(options.vocab_size)},
      {"character_coverage", fmt::format("{}", options.character_coverage)},
      {"input_sentence_size", std::to_string(options.max_sentences)},
      {"shuffle_input_sentence", "true"},
      {"max_sentence_length", std::to_string(options.max_sentence_length)},
      {"num_threads", std::to_string(options.threads)},
      {"pad_id", std::to_string(kPadId)},
      {"unk_id", std::to_string(kUnkId)},
      {"bos_id", std::to_string(kBosId)},
      {"eos_id", std::to_string(kEosId)},
      {"pad_piece", "<pad>"},
      {"unk_piece", "<unk>"},
      {"bos_piece", "<s>"},
      {"eos_piece", "</s>"},
      {"minloglevel", "2"},  // SentencePiece's own progress chatter stays quiet
  };
  // The sampling and shuffling seed is process-wide in this SentencePiece version, not a spec
  // field.
  sentencepiece::SetRandomGeneratorSeed(options.seed);
  VectorIterator iterator(sentences);
  std::string model;
  const auto status = sentencepiece::SentencePieceTrainer::Train(args, &iterator, &model);
  if (!status.ok()) {
    const bool too_large = status.ToString().find("ocabulary size") != std::string::npos;
    throw std::runtime_error(
        "SentencePiece training failed: " + status.ToString() +
        (too_large ? " (the text supports fewer pieces: lower --vocab-size)" : ""));
  }
  return model;
}

Vocabulary::Vocabulary(std::unique_ptr<sentencepiece::SentencePieceProcessor> processor,
                       std::string name, std::string serialized)
    : processor_(std::move(processor)),
      name_(std::move(name)),
      serialized_(std::move(serialized)) {}
Vocabulary::~Vocabulary() = default;
Vocabulary::Vocabulary(Vocabulary&&) noexcept = default;
Vocabulary& Vocabulary::operator=(Vocabulary&&) noexcept = default;

Vocabulary Vocabulary::load(const std::string& model_path) {
  std::ifstream in(model_path, std::ios::binary);
  if (!in) throw std::runtime_error(model_path + ": cannot open SentencePiece model");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return from_serialized(bytes.str(), model_path);
}

Vocabulary Vocabulary::from_serialized(const std::string& model_proto, const std::string& name) {
  auto processor = std::make_unique<sentencepiece::SentencePieceProcessor>();
  const auto status = processor->LoadFromSerializedProto(model_proto);
  if (!status.ok()) {
    throw std::runtime_error(name + ": not a valid SentencePiece model: " + status.ToString());
  }
  // Shards and the model assume the fixed special ids; a foreign model would silently misalign.
  if (processor->pad_id() != kPadId || processor->unk_id() != kUnkId ||
      processor->bos_id() != kBosId || processor->eos_id() != kEosId) {
    throw std::runtime_error(fmt::format(
        "{}: special ids are pad={} unk={} bos={} eos={}, expected pad={} unk={} bos={} eos={} "
        "(train it with nmt-preprocess, or with spm_train --pad_id=0 --unk_id=1 --bos_id=2 "
        "--eos_id=3)",
        name, processor->pad_id(), processor->unk_id(), processor->bos_id(), processor->eos_id(),
        kPadId, kUnkId, kBosId, kEosId));
  }
  return Vocabulary(std::move(processor), name, model_proto);
}

std::vector<std::int32_t> Vocabulary::encode(const std::string& text) const {
  std::vector<int> ids;
  const auto status = processor_->Encode(text, &ids);
  if (!status.ok()) throw std::runtime_error(name_ + ": encode failed: " + status.ToString());
  return {ids.begin(), ids.end()};
}

std::string Vocabulary::decode(const std::vector<std::int32_t>& ids) const {
  std::vector<int> kept;
  kept.reserve(ids.size());
  for (auto id : ids) {
    if (id != kPadId && id != kBosId && id != kEosId) kept.push_back(id);
  }
  std::string text;
  const auto status = processor_->Decode(kept, &text);
  if (!status.ok()) throw std::runtime_error(name_ + ": decode failed: " + status.ToString());
  return text;
}

std::string Vocabulary::piece(std::int32_t id) const {
  return processor_->IdToPiece(id);
}

int Vocabulary::size() const {
  return processor_->GetPieceSize();
}

std::string Vocabulary::sha256() const {
  return sha256_hex(serialized_);
}

CachedEncoder::CachedEncoder(const Vocabulary& vocab, std::size_t max_entries)
    : vocab_(vocab), max_entries_(max_entries) {}

void CachedEncoder::encode(const std::string& text, std::vector<std::int32_t>& ids) {
  ids.clear();
  const bool normalised = !text.empty() && text.front() != ' ' && text.back() != ' ' &&
                          text.find("  ") == std::string::npos;
  if (!normalised) {
    ids = vocab_.encode(text);
    return;
  }
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string::npos) end = text.size();
    word_.assign(text, start, end - start);
    auto it = cache_.find(word_);
    if (it == cache_.end()) {
      ++misses_;
      if (cache_.size() >= max_entries_) cache_.clear();  // bounded memory; rare on real corpora
      it = cache_.emplace(word_, vocab_.encode(word_)).first;
    } else {
      ++hits_;
    }
    ids.insert(ids.end(), it->second.begin(), it->second.end());
    start = end + 1;
  }
}

}  // namespace nmt::preprocess
