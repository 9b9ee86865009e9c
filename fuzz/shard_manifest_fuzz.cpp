// Fuzz harness: a preprocessed directory's manifest.json (preprocess/shard_format.h,
// read_manifest) and the split it describes opened as training opens it (ShardDataset::open, then
// its pairs read). Beside the manifest lies one valid shard, train-00000.h5 (3 pairs, vocabulary
// size 100), that a manifest may name. Expected: std::runtime_error naming the file, or
// std::invalid_argument.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "fuzz/fuzz_input.h"
#include "preprocess/shard_format.h"

namespace {

namespace pre = nmt::preprocess;

// Writes the shard the manifests may name, once.
void write_shard() {
  static const bool written = [] {
    pre::ShardHeader header;
    header.split = "train";
    header.vocab_size = 100;
    header.vocab_sha256 = std::string(64, '0');
    pre::ShardWriter writer(nmt::fuzz::scratch().path().string(), header, 10, 0);
    writer.add({5, 6, 7}, {8, 9}, 0);
    writer.add({10}, {11, 12, 13, 14}, 1);
    writer.add({}, {99}, 2);
    (void)writer.finish();
    return true;
  }();
  (void)written;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  nmt::fuzz::quiet_logs();
  write_shard();
  const auto& scratch = nmt::fuzz::scratch();
  scratch.write(pre::kManifestFile, nmt::fuzz::as_text(data, size));
  const std::string dir = scratch.path().string();
  try {
    const pre::Manifest manifest = pre::read_manifest(dir);
    for (const auto& split : manifest.splits) {
      (void)split.pairs();
      const pre::ShardDataset dataset = pre::ShardDataset::open(dir, split.name);
      const std::int64_t pairs = std::min<std::int64_t>(dataset.size(), 100);
      for (std::int64_t i = 0; i < pairs; ++i) {
        (void)dataset.lengths(i);
        (void)dataset.pair(i);
      }
      dataset.scan_lengths([](std::int64_t, const pre::PairLengths&) {});
    }
  } catch (const std::runtime_error&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
