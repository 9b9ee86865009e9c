// The C interface of sentencepiece_shim.h over SentencePiece's C++ API. Nothing else of the
// project is linked into this library, so it can live in its own symbol scope.

#include "preprocess/sentencepiece_shim.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <random>
#include <string>
#include <unordered_map>
#include <vector>

// SentencePiece's sampling draws from a per-thread std::mt19937 that it seeds once, on the thread's
// first use, from the process-wide seed. Its accessor is declared in util.h, which is not
// installed, but exported by the library (0.1.97, Debian bookworm's), so each sampled encoding can
// reseed it and stay independent of threads and of call order.
namespace sentencepiece::random {
std::mt19937* GetRandomGenerator();
}  // namespace sentencepiece::random

struct nmt_spm {
  sentencepiece::SentencePieceProcessor processor;
};

namespace {

int fail(nmt_spm_bytes_sink error, void* context, const std::string& message) {
  error(context, message.data(), message.size());
  return 1;
}

// Feeds caller-owned sentences to the trainer without copying them into a file.
class ArrayIterator : public sentencepiece::SentenceIterator {
 public:
  ArrayIterator(const char* const* sentences, const size_t* sizes, size_t count)
      : sentences_(sentences), sizes_(sizes), count_(count) {
    load();
  }
  bool done() const override { return index_ >= count_; }
  void Next() override {
    ++index_;
    load();
  }
  const std::string& value() const override { return current_; }
  sentencepiece::util::Status status() const override { return {}; }

 private:
  void load() {
    if (index_ < count_) current_.assign(sentences_[index_], sizes_[index_]);
  }
  const char* const* sentences_;
  const size_t* sizes_;
  size_t count_;
  size_t index_ = 0;
  std::string current_;
};

}  // namespace

extern "C" {

int nmt_spm_load(const char* model, size_t size, nmt_spm** out, nmt_spm_bytes_sink error,
                 void* context) {
  auto spm = std::make_unique<nmt_spm>();
  const auto status = spm->processor.LoadFromSerializedProto(std::string(model, size));
  if (!status.ok()) return fail(error, context, status.ToString());
  *out = spm.release();
  return 0;
}

void nmt_spm_free(nmt_spm* spm) {
  delete spm;
}

int nmt_spm_size(const nmt_spm* spm) {
  return spm->processor.GetPieceSize();
}

int nmt_spm_special_id(const nmt_spm* spm, int which) {
  switch (which) {
    case 0:
      return spm->processor.pad_id();
    case 1:
      return spm->processor.unk_id();
    case 2:
      return spm->processor.bos_id();
    default:
      return spm->processor.eos_id();
  }
}

int nmt_spm_encode(const nmt_spm* spm, const char* text, size_t size, nmt_spm_ids_sink ids,
                   void* context, nmt_spm_bytes_sink error, void* error_context) {
  std::vector<int> out;
  const auto status = spm->processor.Encode(absl::string_view(text, size), &out);
  if (!status.ok()) return fail(error, error_context, status.ToString());
  ids(context, out.data(), out.size());
  return 0;
}

int nmt_spm_sample_encode(const nmt_spm* spm, const char* text, size_t size, float alpha,
                          uint64_t seed, nmt_spm_ids_sink ids, void* context,
                          nmt_spm_bytes_sink error, void* error_context) {
  sentencepiece::random::GetRandomGenerator()->seed(static_cast<std::mt19937::result_type>(seed));
  std::vector<int> out;
  const auto status = spm->processor.SampleEncode(absl::string_view(text, size), -1, alpha, &out);
  if (!status.ok()) return fail(error, error_context, status.ToString());
  ids(context, out.data(), out.size());
  return 0;
}

int nmt_spm_decode(const nmt_spm* spm, const int* ids, size_t count, nmt_spm_bytes_sink text,
                   void* context, nmt_spm_bytes_sink error, void* error_context) {
  std::string out;
  const auto status = spm->processor.Decode(std::vector<int>(ids, ids + count), &out);
  if (!status.ok()) return fail(error, error_context, status.ToString());
  text(context, out.data(), out.size());
  return 0;
}

void nmt_spm_piece(const nmt_spm* spm, int id, nmt_spm_bytes_sink piece, void* context) {
  const std::string& p = spm->processor.IdToPiece(id);
  piece(context, p.data(), p.size());
}

int nmt_spm_train(const char* const* keys, const char* const* values, size_t flags,
                  const char* const* sentences, const size_t* sizes, size_t count, unsigned seed,
                  nmt_spm_bytes_sink model, void* context, nmt_spm_bytes_sink error,
                  void* error_context) {
  std::unordered_map<std::string, std::string> args;
  for (size_t i = 0; i < flags; ++i) args[keys[i]] = values[i];
  // The sampling seed is process-wide in this SentencePiece version, not a trainer flag.
  sentencepiece::SetRandomGeneratorSeed(seed);
  ArrayIterator iterator(sentences, sizes, count);
  std::string serialized;
  const auto status = sentencepiece::SentencePieceTrainer::Train(args, &iterator, &serialized);
  if (!status.ok()) return fail(error, error_context, status.ToString());
  model(context, serialized.data(), serialized.size());
  return 0;
}

}  // extern "C"
