#pragma once
// nmt-preprocess end to end: read and clean every split, learn (or reuse) the joint vocabulary,
// encode in parallel, write shards and the manifest. Everything is written into a temporary
// directory beside the output and renamed at the end, so a failed run leaves no partial output.
//
// Memory stays flat in the corpus size: cleaning streams to a temporary text file, the vocabulary
// learns from a fixed-size reservoir sample, and encoding holds one block of pairs and one shard.

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

PreprocessResult run_preprocess(const PreprocessConfig& config);

// Encodes the cleaned pairs of `clean_file` ("source\ttarget\tindex" lines) with `threads` threads
// and writes them as shards. The output bytes are identical for every thread count. Exposed for
// the benchmark against spm_encode.
std::vector<ShardInfo> encode_to_shards(const std::string& clean_file, const Vocabulary& vocab,
                                        const ShardHeader& header, const ShardOptions& options,
                                        int threads, const std::string& dir,
                                        std::int64_t expected_pairs);

}  // namespace nmt::preprocess
