#include "preprocess/vocabulary.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <unordered_map>

#include "common/checked_paths.h"
#include "common/sha256.h"
#include "preprocess/sentencepiece_shim.h"

#ifndef NMT_SPM_SHIM_PATH
#define NMT_SPM_SHIM_PATH "libnmt_sentencepiece.so"
#endif

namespace nmt::preprocess {
namespace {

// SentencePiece through libnmt_sentencepiece.so, loaded once in its own deep-bound symbol scope
// (see sentencepiece_shim.h for why): where the build wrote it, else found by name through the
// library path (a relocated copy of the tools, as in the runtime container image).
// $NMT_SENTENCEPIECE_SHIM names the file instead.
constexpr const char* kShimName = "libnmt_sentencepiece.so";

struct SentencePieceLibrary {
  decltype(&nmt_spm_load) load;
  decltype(&nmt_spm_free) free;
  decltype(&nmt_spm_size) size;
  decltype(&nmt_spm_special_id) special_id;
  decltype(&nmt_spm_encode) encode;
  decltype(&nmt_spm_sample_encode) sample_encode;
  decltype(&nmt_spm_decode) decode;
  decltype(&nmt_spm_piece) piece;
  decltype(&nmt_spm_train) train;

  static const SentencePieceLibrary& get() {
    static const SentencePieceLibrary library = open();
    return library;
  }

 private:
  static SentencePieceLibrary open() {
    const char* env = std::getenv("NMT_SENTENCEPIECE_SHIM");
    const bool named = env != nullptr && *env != '\0';
    std::string path = named ? env : NMT_SPM_SHIM_PATH;
    // Deep binding keeps the shim's protobuf apart from LibTorch's. ASan and TSan refuse it (it
    // would bypass their interceptors); a sanitized build loads the shim without.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    constexpr int kBinding = 0;
#elif defined(__has_feature)
    constexpr int kBinding =
        __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ? 0 : RTLD_DEEPBIND;
#else
    constexpr int kBinding = RTLD_DEEPBIND;
#endif
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | kBinding);
    if (handle == nullptr && !named) {
      const std::string build_error = dlerror();
      path = kShimName;
      handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | kBinding);
      if (handle == nullptr) {
        throw std::runtime_error(fmt::format(
            "cannot load SentencePiece through {} ({}) or {} on the library path ({}): build the "
            "nmt_sentencepiece target, or set NMT_SENTENCEPIECE_SHIM",
            NMT_SPM_SHIM_PATH, build_error, kShimName, dlerror()));
      }
    }
    if (handle == nullptr) {
      throw std::runtime_error(fmt::format(
          "cannot load SentencePiece through {} (NMT_SENTENCEPIECE_SHIM): {}", path, dlerror()));
    }
    const auto symbol = [&](const char* name) {
      void* address = dlsym(handle, name);
      if (address == nullptr) throw std::runtime_error(path + ": missing symbol " + name);
      return address;
    };
    SentencePieceLibrary l;
    l.load = reinterpret_cast<decltype(l.load)>(symbol("nmt_spm_load"));
    l.free = reinterpret_cast<decltype(l.free)>(symbol("nmt_spm_free"));
    l.size = reinterpret_cast<decltype(l.size)>(symbol("nmt_spm_size"));
    l.special_id = reinterpret_cast<decltype(l.special_id)>(symbol("nmt_spm_special_id"));
    l.encode = reinterpret_cast<decltype(l.encode)>(symbol("nmt_spm_encode"));
    l.sample_encode = reinterpret_cast<decltype(l.sample_encode)>(symbol("nmt_spm_sample_encode"));
    l.decode = reinterpret_cast<decltype(l.decode)>(symbol("nmt_spm_decode"));
    l.piece = reinterpret_cast<decltype(l.piece)>(symbol("nmt_spm_piece"));
    l.train = reinterpret_cast<decltype(l.train)>(symbol("nmt_spm_train"));
    return l;
  }
};

void append_bytes(void* context, const char* data, size_t size) {
  static_cast<std::string*>(context)->append(data, size);
}

void store_ids(void* context, const int* ids, size_t count) {
  static_cast<std::vector<std::int32_t>*>(context)->assign(ids, ids + count);
}

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

void SamplingOptions::validate() const {
  if (copies < 0) throw std::invalid_argument("sampling.copies must be >= 0 (0: no sampling)");
  if (copies > 0 && (alpha <= 0.0 || alpha >= 1.0)) {
    throw std::invalid_argument(
        fmt::format("sampling.alpha must be in (0, 1) when sampling.copies > 0, got {}", alpha));
  }
}

std::string train_vocabulary(const std::vector<std::string>& sentences,
                             const VocabularyOptions& options) {
  options.validate();
  if (sentences.empty()) throw std::invalid_argument("cannot train a vocabulary on no sentences");
  const std::vector<std::pair<std::string, std::string>> flags = {
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
  std::vector<const char*> keys, values, texts;
  std::vector<size_t> sizes;
  for (const auto& [k, v] : flags) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  for (const auto& sentence : sentences) {
    texts.push_back(sentence.data());
    sizes.push_back(sentence.size());
  }
  std::string model, error;
  if (SentencePieceLibrary::get().train(keys.data(), values.data(), keys.size(), texts.data(),
                                        sizes.data(), texts.size(), options.seed, append_bytes,
                                        &model, append_bytes, &error) != 0) {
    const bool too_large = error.find("ocabulary size") != std::string::npos;
    throw std::runtime_error(
        "SentencePiece training failed: " + error +
        (too_large ? " (the text supports fewer pieces: lower --vocab-size)" : ""));
  }
  return model;
}

void Vocabulary::Release::operator()(nmt_spm* spm) const {
  SentencePieceLibrary::get().free(spm);
}

Vocabulary::Vocabulary(std::unique_ptr<nmt_spm, Release> processor, std::string name,
                       std::string serialized)
    : processor_(std::move(processor)),
      name_(std::move(name)),
      serialized_(std::move(serialized)) {}
Vocabulary::~Vocabulary() = default;
Vocabulary::Vocabulary(Vocabulary&&) noexcept = default;
Vocabulary& Vocabulary::operator=(Vocabulary&&) noexcept = default;

Vocabulary Vocabulary::load(const std::string& model_path) {
  // A joint model of the paper's 37,000 pieces is under a megabyte; 1 GiB is far past any.
  return from_serialized(read_regular_file(model_path, 1u << 30, "the SentencePiece model"),
                         model_path);
}

Vocabulary Vocabulary::from_serialized(const std::string& model_proto, const std::string& name) {
  const auto& spm = SentencePieceLibrary::get();
  nmt_spm* raw = nullptr;
  std::string error;
  if (spm.load(model_proto.data(), model_proto.size(), &raw, append_bytes, &error) != 0) {
    throw std::runtime_error(name + ": not a valid SentencePiece model: " + error);
  }
  std::unique_ptr<nmt_spm, Release> processor(raw);
  // Shards and the model assume the fixed special ids; a foreign model would silently misalign.
  const int pad = spm.special_id(raw, 0), unk = spm.special_id(raw, 1),
            bos = spm.special_id(raw, 2), eos = spm.special_id(raw, 3);
  if (pad != kPadId || unk != kUnkId || bos != kBosId || eos != kEosId) {
    throw std::runtime_error(fmt::format(
        "{}: special ids are pad={} unk={} bos={} eos={}, expected pad={} unk={} bos={} eos={} "
        "(train it with nmt-preprocess, or with spm_train --pad_id=0 --unk_id=1 --bos_id=2 "
        "--eos_id=3)",
        name, pad, unk, bos, eos, kPadId, kUnkId, kBosId, kEosId));
  }
  return Vocabulary(std::move(processor), name, model_proto);
}

std::vector<std::int32_t> Vocabulary::encode(const std::string& text) const {
  std::vector<std::int32_t> ids;
  std::string error;
  if (SentencePieceLibrary::get().encode(processor_.get(), text.data(), text.size(), store_ids,
                                         &ids, append_bytes, &error) != 0) {
    throw std::runtime_error(name_ + ": encode failed: " + error);
  }
  return ids;
}

std::vector<std::int32_t> Vocabulary::sample_encode(const std::string& text, double alpha,
                                                    std::uint64_t seed) const {
  std::vector<std::int32_t> ids;
  std::string error;
  if (SentencePieceLibrary::get().sample_encode(processor_.get(), text.data(), text.size(),
                                                static_cast<float>(alpha), seed, store_ids, &ids,
                                                append_bytes, &error) != 0) {
    throw std::runtime_error(name_ + ": sampled encode failed: " + error);
  }
  return ids;
}

std::string Vocabulary::decode(const std::vector<std::int32_t>& ids) const {
  std::vector<int> kept;
  kept.reserve(ids.size());
  for (auto id : ids) {
    if (id != kPadId && id != kBosId && id != kEosId) kept.push_back(id);
  }
  std::string text, error;
  if (SentencePieceLibrary::get().decode(processor_.get(), kept.data(), kept.size(), append_bytes,
                                         &text, append_bytes, &error) != 0) {
    throw std::runtime_error(name_ + ": decode failed: " + error);
  }
  return text;
}

std::string Vocabulary::piece(std::int32_t id) const {
  std::string piece;
  SentencePieceLibrary::get().piece(processor_.get(), id, append_bytes, &piece);
  return piece;
}

int Vocabulary::size() const {
  return SentencePieceLibrary::get().size(processor_.get());
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
