#pragma once
// The joint subword vocabulary (paper section 5.1: a shared source-target vocabulary of about
// 37,000 BPE tokens), learned and applied with SentencePiece. Ids 0-3 are fixed so that shards,
// the model's padding mask and the decoder's start/stop symbols agree on them.

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

struct nmt_spm;  // the SentencePiece handle of sentencepiece_shim.h

namespace nmt::preprocess {

// Fixed special ids, written into every model this project trains.
inline constexpr std::int32_t kPadId = 0;
inline constexpr std::int32_t kUnkId = 1;
inline constexpr std::int32_t kBosId = 2;
inline constexpr std::int32_t kEosId = 3;

struct VocabularyOptions {
  std::string model_type = "bpe";        // "bpe" (the paper) or "unigram"
  int vocab_size = 37000;                // the paper's WMT14 EN-DE size
  double character_coverage = 1.0;       // keep every character of the (European) training text
  std::int64_t max_sentences = 1000000;  // training sentences sampled from the corpus (both sides)
  int max_sentence_length = 4192;        // bytes; longer training sentences are skipped
  int threads = 1;                       // trainer threads (recorded in the model bytes)
  std::uint32_t seed = 1;                // fixes the sampling so a vocabulary can be rebuilt
  void validate() const;
};

// Subword regularization of the train split: BPE-dropout (Provilkov et al. 2020) for a BPE
// vocabulary, sampling (Kudo 2018) for a unigram one. nmt-preprocess writes the split `copies`
// times, each pair segmented anew in every copy, so that each pass over the shards sees other
// segmentations of the same text; valid and test keep the one deterministic segmentation that
// translation uses.
struct SamplingOptions {
  int copies = 0;         // 0: the deterministic segmentation, once (the paper)
  double alpha = 0.1;     // bpe: the probability of skipping a merge; unigram: the smoothing
  std::int64_t seed = 1;  // with the copy and the pair's index, fixes each sampled segmentation
  void validate() const;  // throws std::invalid_argument naming the field
};

// Trains a model on `sentences` (both sides of the corpus, already cleaned) and returns the
// serialized model proto; save it with nmt::write_file_atomically, load it with from_serialized.
std::string train_vocabulary(const std::vector<std::string>& sentences,
                             const VocabularyOptions& options);

class Vocabulary {
 public:
  static Vocabulary load(const std::string& model_path);
  static Vocabulary from_serialized(const std::string& model_proto, const std::string& name);
  ~Vocabulary();
  Vocabulary(Vocabulary&&) noexcept;
  Vocabulary& operator=(Vocabulary&&) noexcept;

  // Subword ids of `text`, without BOS/EOS.
  std::vector<std::int32_t> encode(const std::string& text) const;
  // A sampled segmentation of `text` (subword regularization): for a BPE vocabulary, BPE-dropout
  // (Provilkov et al. 2020) with merge-drop probability `alpha`; for a unigram one, sampling
  // (Kudo 2018) with smoothing `alpha`. Deterministic in (text, alpha, seed), on any thread.
  std::vector<std::int32_t> sample_encode(const std::string& text, double alpha,
                                          std::uint64_t seed) const;
  // Detokenized text; special ids are skipped.
  std::string decode(const std::vector<std::int32_t>& ids) const;
  std::string piece(std::int32_t id) const;
  int size() const;
  // Serialized model and its SHA-256 (hex), which shards record to detect a vocabulary mismatch.
  const std::string& serialized() const { return serialized_; }
  std::string sha256() const;

 private:
  struct Release {
    void operator()(nmt_spm* spm) const;
  };
  Vocabulary(std::unique_ptr<nmt_spm, Release> processor, std::string name, std::string serialized);
  std::unique_ptr<nmt_spm, Release> processor_;
  std::string name_;
  std::string serialized_;
};

// Encodes text word by word through a cache, with exactly the ids of Vocabulary::encode: the
// models this project trains split on whitespace, so no piece spans two words and each word's
// pieces do not depend on its neighbours. Corpora repeat their words (Zipf), so most words are
// looked up instead of normalised and segmented again. One per thread; not thread-safe.
class CachedEncoder {
 public:
  explicit CachedEncoder(const Vocabulary& vocab, std::size_t max_entries = 1 << 20);
  // `text` must be whitespace-normalised (single spaces, no leading/trailing), as cleaning leaves
  // it; anything else is passed to Vocabulary::encode unchanged.
  void encode(const std::string& text, std::vector<std::int32_t>& ids);
  std::size_t hits() const { return hits_; }
  std::size_t misses() const { return misses_; }

 private:
  const Vocabulary& vocab_;
  std::size_t max_entries_;
  std::unordered_map<std::string, std::vector<std::int32_t>> cache_;
  std::string word_;
  std::size_t hits_ = 0;
  std::size_t misses_ = 0;
};

}  // namespace nmt::preprocess
