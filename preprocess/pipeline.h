#pragma once
// nmt-preprocess end to end: read and clean every split, learn (or reuse) the joint vocabulary,
// encode in parallel, write shards and the manifest. Everything is written into a temporary
// directory beside the output and renamed at the end, so a failed or stopped run leaves no partial
// output (output_dir.h).
//
// A stop request (nmt-preprocess: SIGINT, SIGTERM) is polled for every pair while cleaning, every
// block while encoding, between stages and about every 100 ms during vocabulary training.
//
// Memory stays flat in the corpus size: cleaning streams to a temporary text file, the vocabulary
// learns from a fixed-size reservoir sample, and encoding holds one block of pairs and one shard.

#include <functional>
#include <stdexcept>
#include <string>

#include "preprocess/preprocess_config.h"
#include "preprocess/shard_format.h"

namespace nmt::preprocess {

struct PreprocessResult {
  Manifest manifest;
  double seconds_clean = 0;
  double seconds_vocab = 0;
  double seconds_encode = 0;
};

// Polled for a stop request; true: stop.
using StopCheck = std::function<bool()>;

// Thrown when a StopCheck said stop; the temporary output is removed by then. A SentencePiece
// training in flight cannot be interrupted and is left running on its own thread (it owns its
// inputs), so the process should end soon, without static destructors (std::_Exit).
class PreprocessStopped : public std::runtime_error {
 public:
  PreprocessStopped() : std::runtime_error("preprocessing stopped on request") {}
};

PreprocessResult run_preprocess(const PreprocessConfig& config, const StopCheck& stop = {});

// Encodes the cleaned pairs of `clean_file` ("source\ttarget\tindex" lines) with `threads` threads
// and writes them as shards: once with the deterministic segmentation, or `sampling.copies` times
// with sampled ones (each pair keeps its index in every copy). The output bytes are identical for
// every thread count. Exposed for the benchmark against spm_encode.
std::vector<ShardInfo> encode_to_shards(const std::string& clean_file, const Vocabulary& vocab,
                                        const ShardHeader& header, const ShardOptions& options,
                                        int threads, const std::string& dir,
                                        std::int64_t expected_pairs, const StopCheck& stop = {},
                                        const SamplingOptions& sampling = {});

}  // namespace nmt::preprocess
