// Beam search (beam 4, alpha 0.6) with and without the decoder's key/value cache, on the same
// checkpoint and sentences in one run: sentences/s, output tokens/s and the ratio.
//
//   build/bench/beam_cache_bench --checkpoint C.h5 --spm-model spm.model [--input F] [--limit N]

#include <fmt/format.h>

#include <chrono>
#include <iostream>

#include "common/cli.h"
#include "preprocess/corpus_reader.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/decode/translator.h"
#include "trainer/runtime/blas_backend.h"

namespace {

struct Run {
  double seconds;
  std::int64_t tokens;
};

Run translate(nmt::decode::Translator& translator,
              const std::vector<std::vector<std::int64_t>>& sources) {
  const auto start = std::chrono::steady_clock::now();
  const auto results = translator.translate_ids(sources);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::int64_t tokens = 0;
  for (const auto& r : results) tokens += static_cast<std::int64_t>(r.front().tokens.size()) + 1;
  return {seconds, tokens};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Beam search with and without the KV cache, side by side", "beam_cache_bench"};
  std::string checkpoint, spm_model, input;
  std::int64_t limit = 1000;
  int threads = 0;
  const char* data = std::getenv("NMT_DATA_DIR");
  input = std::string(data ? data : "../shared/data/multi30k") + "/test_2016_flickr.en.gz";
  nmt::LogOptions log;
  log.tool = "beam_cache_bench";
  log.level = "warn";
  app.add_option("--checkpoint", checkpoint, "Trained checkpoint")->required();
  app.add_option("--spm-model", spm_model, "Its SentencePiece model")->required();
  app.add_option("--input", input, "Source sentences (plain or .gz)")->capture_default_str();
  app.add_option("--limit", limit, "Sentences to translate")->capture_default_str();
  app.add_option("--threads", threads, "CPU threads (0: all cores)");
  nmt::add_logging_flags(app, log);
  return nmt::run_tool(app, log, argc, argv, [&] {
    nmt::runtime::configure_cpu_threads(threads);
    const auto config = nmt::checkpoint::read_checkpoint_config(checkpoint);
    nmt::model::Transformer model(config.model);
    nmt::checkpoint::load_checkpoint(checkpoint, *model, nullptr, config);
    const auto vocab = nmt::preprocess::Vocabulary::load(spm_model);
    nmt::decode::TranslateOptions options;  // beam 4, alpha 0.6, max length + 50
    nmt::decode::Translator translator(model, vocab, c10::Device(c10::kCPU), options);
    std::vector<std::vector<std::int64_t>> sources;
    nmt::preprocess::LineSource lines(input);
    for (std::string line; static_cast<std::int64_t>(sources.size()) < limit && lines.next(line);) {
      sources.push_back(translator.encode_line(line));
    }
    const Run cached = translate(translator, sources);
    options.beam.use_cache = false;
    nmt::decode::Translator uncached_translator(model, vocab, c10::Device(c10::kCPU), options);
    const Run uncached = translate(uncached_translator, sources);
    const double n = static_cast<double>(sources.size());
    std::cout << fmt::format("{:<12}{:>12}{:>14}{:>14}\n", "beam 4", "seconds", "sentences/s",
                             "tokens/s");
    std::cout << fmt::format("{:<12}{:>12.2f}{:>14.1f}{:>14.1f}\n", "KV cache", cached.seconds,
                             n / cached.seconds, cached.tokens / cached.seconds);
    std::cout << fmt::format("{:<12}{:>12.2f}{:>14.1f}{:>14.1f}\n", "recompute", uncached.seconds,
                             n / uncached.seconds, uncached.tokens / uncached.seconds);
    std::cout << fmt::format("speed-up with the cache: {:.2f}x ({} sentences)\n",
                             uncached.seconds / cached.seconds, sources.size());
    return 0;
  });
}
