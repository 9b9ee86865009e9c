// Beam search (beam 4, alpha 0.6) with the decoder's key/value cache (what the tools decode with)
// and with every step's prefix recomputed (recomputed_steps.h), on the same checkpoint and
// sentences in one run: sentences/s, output tokens/s and the ratio. Both search the sentences
// sorted by length in the translator's batches (padded_batch.h, its automatic budget). Each mode
// first searches a few sentences untimed (cuBLAS handles, the caching allocator, thread pools).
//
//   build/bench/beam_cache_bench --checkpoint C.h5 --spm-model spm.model [--input F] [--limit N]
//       [--device cuda] [--precision bf16] [--json FILE]

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>

#include "apps/tool_main.h"
#include "bench/bench_device.h"
#include "common/cli.h"
#include "preprocess/corpus_reader.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/checkpoint_model.h"
#include "trainer/data/padded_batch.h"
#include "trainer/decode/recomputed_steps.h"
#include "trainer/decode/translator.h"
#include "trainer/runtime/blas_backend.h"
#include "trainer/runtime/device.h"
#include "trainer/runtime/precision.h"

namespace {

struct Run {
  double seconds;
  std::int64_t tokens;
};

constexpr std::size_t kWarmupSentences = 16;

// Output tokens (EOS included) of the best hypotheses of `sources` (sorted by length), searched
// in batches of at most `budget` padded tokens.
std::int64_t search(nmt::decode::Translator& translator, const nmt::decode::TranslateOptions& o,
                    const std::vector<std::vector<std::int64_t>>& sources,
                    const nmt::decode::DecoderStepsFactory& steps, const c10::Device& device) {
  nmt::runtime::AutocastScope autocast(o.precision, device);
  std::vector<std::int64_t> lengths;
  for (const auto& source : sources) lengths.push_back(static_cast<std::int64_t>(source.size()));
  std::int64_t tokens = 0;
  std::size_t start = 0;
  for (const auto end : nmt::data::batch_ends(lengths, nmt::decode::auto_batch_tokens(o))) {
    const std::vector<std::vector<std::int64_t>> batch(
        sources.begin() + static_cast<std::ptrdiff_t>(start),
        sources.begin() + static_cast<std::ptrdiff_t>(end));
    const auto src = nmt::data::padded_rows(batch, /*eos=*/true).to(device);  // [batch, src_len]
    for (const auto& best : nmt::decode::beam_search(translator.model(), src, o.decode.beam,
                                                     o.decode.repetition, steps)) {
      tokens += static_cast<std::int64_t>(best.front().tokens.size()) + 1;
    }
    start = end;
  }
  return tokens;
}

Run timed_search(nmt::decode::Translator& translator, const nmt::decode::TranslateOptions& o,
                 const std::vector<std::vector<std::int64_t>>& sources,
                 const nmt::decode::DecoderStepsFactory& steps, const c10::Device& device) {
  const auto count = static_cast<std::ptrdiff_t>(std::min(sources.size(), kWarmupSentences));
  search(translator, o, {sources.begin(), sources.begin() + count}, steps, device);
  const auto start = std::chrono::steady_clock::now();
  const auto tokens = search(translator, o, sources, steps, device);
  return {std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), tokens};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Beam search with and without the KV cache, side by side", "beam_cache_bench"};
  std::string checkpoint, spm_model, input;
  std::int64_t limit = 1000;
  nmt::bench::DeviceFlags device_flags;
  std::string precision_name = "fp32", json;
  const char* data = std::getenv("NMT_DATA_DIR");
  input = std::string(data ? data : "../shared/data/multi30k") + "/test_2016_flickr.en.gz";
  app.add_option("--checkpoint", checkpoint, "Trained checkpoint")->required();
  app.add_option("--spm-model", spm_model, "Its SentencePiece model")->required();
  app.add_option("--input", input, "Source sentences (plain or .gz)")->capture_default_str();
  app.add_option("--limit", limit, "Sentences to translate")->capture_default_str();
  nmt::bench::add_device_flags(app, device_flags);
  app.add_option("--precision", precision_name, "fp32, bf16, fp16 or auto")->capture_default_str();
  app.add_option("--json", json, "Also write the figures to this JSON file");
  return nmt::apps::run_bench(app, argc, argv, [&] {
    const auto device = nmt::bench::select_device(device_flags);
    std::cout << nmt::bench::cpu_line() << '\n';
    const auto precision =
        nmt::runtime::resolve_precision(nmt::runtime::parse_precision(precision_name), device)
            .precision;
    if (device.is_cuda()) nmt::runtime::configure_cuda_matmuls(precision);
    const auto model = nmt::checkpoint::load_for_inference(checkpoint).model;
    const auto vocab = nmt::preprocess::Vocabulary::load(spm_model);
    nmt::decode::TranslateOptions options;  // beam 4, alpha 0.6, max length + 50
    options.precision = precision;
    nmt::decode::Translator translator(model, vocab, device, options);
    std::vector<std::vector<std::int64_t>> sources;
    nmt::preprocess::LineSource lines(input);
    for (std::string line; static_cast<std::int64_t>(sources.size()) < limit && lines.next(line);) {
      sources.push_back(translator.encode_line(line));
    }
    std::stable_sort(sources.begin(), sources.end(),
                     [](const auto& a, const auto& b) { return a.size() < b.size(); });
    const Run cached =
        timed_search(translator, options, sources, nmt::decode::cached_steps, device);
    const Run uncached =
        timed_search(translator, options, sources, nmt::decode::recomputed_steps, device);
    const double n = static_cast<double>(sources.size());
    std::cout << fmt::format("{:<12}{:>12}{:>14}{:>14}\n", "beam 4", "seconds", "sentences/s",
                             "tokens/s");
    std::cout << fmt::format("{:<12}{:>12.2f}{:>14.1f}{:>14.1f}\n", "KV cache", cached.seconds,
                             n / cached.seconds, cached.tokens / cached.seconds);
    std::cout << fmt::format("{:<12}{:>12.2f}{:>14.1f}{:>14.1f}\n", "recompute", uncached.seconds,
                             n / uncached.seconds, uncached.tokens / uncached.seconds);
    std::cout << fmt::format("speed-up with the cache: {:.2f}x ({} sentences, {}, {})\n",
                             uncached.seconds / cached.seconds, sources.size(),
                             nmt::runtime::describe_device(device),
                             nmt::runtime::precision_name(precision));
    if (!json.empty()) {
      const auto figures = [&](const Run& run) {
        return nlohmann::json{{"seconds", run.seconds},
                              {"sentences_per_second", n / run.seconds},
                              {"tokens_per_second", static_cast<double>(run.tokens) / run.seconds}};
      };
      const nlohmann::json out = {{"device", device.str()},
                                  {"precision", nmt::runtime::precision_name(precision)},
                                  {"beam", options.decode.beam.beam_size},
                                  {"sentences", sources.size()},
                                  {"kv_cache", figures(cached)},
                                  {"recompute", figures(uncached)},
                                  {"speedup", uncached.seconds / cached.seconds}};
      std::ofstream file(json);
      file << out.dump(2) << '\n';
      if (!file) throw std::runtime_error("cannot write " + json);
    }
    return 0;
  });
}
