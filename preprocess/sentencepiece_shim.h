#pragma once
// A C interface to SentencePiece, built as its own shared library (libnmt_sentencepiece.so) and
// loaded with dlopen(RTLD_LOCAL | RTLD_DEEPBIND) by vocabulary.cpp.
//
// Why: Debian's libsentencepiece embeds and exports its own copy of protobuf-lite 3.14, while
// LibTorch links the system libprotobuf 3.21. Loaded side by side in one process, one copy's
// symbols replace the other's and the process dies in static initialisation (or on protobuf's
// version check). Deep binding in a local scope lets each library keep its own protobuf, so
// nmt-translate and nmt-train can use both.

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nmt_spm nmt_spm;
typedef void (*nmt_spm_bytes_sink)(void* context, const char* data, size_t size);
typedef void (*nmt_spm_ids_sink)(void* context, const int* ids, size_t count);

// Every function returning int returns 0 on success, else writes a message to `error`.
int nmt_spm_load(const char* model, size_t size, nmt_spm** out, nmt_spm_bytes_sink error,
                 void* context);
void nmt_spm_free(nmt_spm* spm);
int nmt_spm_size(const nmt_spm* spm);
// which: 0 pad, 1 unk, 2 bos, 3 eos
int nmt_spm_special_id(const nmt_spm* spm, int which);
int nmt_spm_encode(const nmt_spm* spm, const char* text, size_t size, nmt_spm_ids_sink ids,
                   void* context, nmt_spm_bytes_sink error, void* error_context);
// A sampled segmentation of `text` (SentencePiece's SampleEncode with nbest_size -1): for a BPE
// model, BPE-dropout with merge-drop probability `alpha`; for a unigram model, a segmentation
// drawn from the lattice with smoothing `alpha`. The calling thread's sampling generator is seeded
// with `seed` first, so the result depends on (text, alpha, seed) only.
int nmt_spm_sample_encode(const nmt_spm* spm, const char* text, size_t size, float alpha,
                          uint64_t seed, nmt_spm_ids_sink ids, void* context,
                          nmt_spm_bytes_sink error, void* error_context);
int nmt_spm_decode(const nmt_spm* spm, const int* ids, size_t count, nmt_spm_bytes_sink text,
                   void* context, nmt_spm_bytes_sink error, void* error_context);
void nmt_spm_piece(const nmt_spm* spm, int id, nmt_spm_bytes_sink piece, void* context);
// Trains on `sentences` with trainer flags given as key/value pairs; the serialized model goes to
// `model`.
int nmt_spm_train(const char* const* keys, const char* const* values, size_t flags,
                  const char* const* sentences, const size_t* sizes, size_t count, unsigned seed,
                  nmt_spm_bytes_sink model, void* context, nmt_spm_bytes_sink error,
                  void* error_context);

#ifdef __cplusplus
}
#endif
