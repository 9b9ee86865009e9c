// How fast the training data path feeds a rank, on one core, from a shard directory of any size:
// the time to open the split and count its pairs (one pass over the offsets), then micro-batches
// planned pool by pool and built as tensors (TokenBatcher, EpochPlan, make_batch), as one rank of
// the paper's update reads them. Prints micro-batches/s and ms per micro-batch beside the budget a
// GPU step leaves (a rank of 8 needs one micro-batch per step: ~4-30 ms on H100s, docs/wmt14.md),
// and the process's peak memory split into anonymous and file-backed pages.
//
//   build/bench/batch_feed_bench --data DIR [--batches N] [--tokens 3125]

#include <fmt/format.h>

#include <chrono>
#include <iostream>
#include <string>

#include "common/cli.h"
#include "common/proc_memory.h"
#include "trainer/data/batching.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// VmHWM, RssAnon and RssFile of this process, in MB.
std::string memory_line() {
  return fmt::format("peak {} MB; now {} MB anonymous, {} MB file-backed",
                     nmt::proc_status_kb("VmHWM") / 1024, nmt::proc_status_kb("RssAnon") / 1024,
                     nmt::proc_status_kb("RssFile") / 1024);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Micro-batches/s of the training data path (plan and build), one core"};
  std::string dir;
  std::int64_t batches = 2000, tokens = 3125;
  app.add_option("--data", dir, "Shard directory (nmt-preprocess output)")->required();
  app.add_option("--batches", batches, "Micro-batches to plan and build");
  app.add_option("--tokens", tokens, "Padded source and target tokens per micro-batch");
  CLI11_PARSE(app, argc, argv);

  nmt::DataConfig config;
  config.max_src_tokens = tokens;
  config.max_tgt_tokens = tokens;
  auto start = std::chrono::steady_clock::now();
  const auto data = nmt::preprocess::ShardDataset::open(dir, "train");
  const nmt::data::TokenBatcher batcher(data, config, 1);
  const double open_s = seconds_since(start);
  std::cout << fmt::format("{}: {} pairs in {} pools; open and count {:.2f} s; {}\n", dir,
                           data.size(), batcher.pools(), open_s, memory_line());

  nmt::data::EpochPlan plan(batcher, 0);
  std::int64_t built = 0, rows = 0, tgt_tokens = 0;
  start = std::chrono::steady_clock::now();
  for (std::int64_t b = 0; b < batches; ++b) {
    const auto* indices = plan.batch(b);
    if (indices == nullptr) break;
    const auto batch = batcher.make_batch(*indices);
    rows += batch.rows();
    tgt_tokens += batch.tgt_tokens;
    ++built;
  }
  const double feed_s = seconds_since(start);
  std::cout << fmt::format(
      "{} micro-batches ({} pairs, {} target tokens) in {:.2f} s: {:.0f} micro-batches/s, "
      "{:.2f} ms each, {:.0f} target tokens/s; {}\n",
      built, rows, tgt_tokens, feed_s, built / feed_s, 1000.0 * feed_s / built, tgt_tokens / feed_s,
      memory_line());
  return 0;
}
