// fp32 decoding on a CPU with the weights packed once for the BLAS (TransformerImpl::pack_fp32,
// what nmt-translate does where the BLAS can) against the plain products that re-pack each
// weight at every call, on the same checkpoint and sentences in one run: beam 4 and greedy,
// alternating rounds (plain, packed, plain, ...), the translator's own batching. Prints
// sentences/s per round, the ratio of the medians, and how many translations differ between the
// two (the products are the same kernels; a difference comes from summation order only).
//
//   build/bench/packed_weights_bench --checkpoint C.h5 [--input F] [--limit N] [--rounds R]
//       [--threads N] [--json FILE]

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
#include "preprocess/vocabulary.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/checkpoint_model.h"
#include "trainer/checkpoint/checkpoint_vocabulary.h"
#include "trainer/decode/translator.h"
#include "trainer/runtime/packed_gemm.h"

namespace {

struct Mode {
  std::string name;
  std::unique_ptr<nmt::decode::Translator> translator;
  std::vector<double> rates;  // sentences/s per round
  std::vector<std::string> texts;
};

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const auto n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"fp32 CPU decoding with packed weights against plain products, side by side",
               "packed_weights_bench"};
  std::string checkpoint, json;
  std::int64_t limit = 1000;
  int rounds = 3;
  nmt::bench::DeviceFlags device_flags;
  const char* data = std::getenv("NMT_DATA_DIR");
  std::string input =
      std::string(data ? data : "../shared/data/multi30k") + "/test_2016_flickr.en.gz";
  app.add_option("--checkpoint", checkpoint, "Trained checkpoint (with its SentencePiece model)")
      ->required();
  app.add_option("--input", input, "Source sentences (plain or .gz)")->capture_default_str();
  app.add_option("--limit", limit, "Sentences to translate")->capture_default_str();
  app.add_option("--rounds", rounds, "Rounds of each mode")->capture_default_str();
  app.add_option("--threads", device_flags.threads, "CPU threads (0: all cores)");
  app.add_option("--json", json, "Also write the figures to this JSON file");
  return nmt::apps::run_bench(app, argc, argv, [&] {
    const auto device = nmt::bench::select_device(device_flags);
    std::cout << nmt::bench::cpu_line() << '\n';
    if (!nmt::runtime::PackedWeight::available()) {
      std::cout << "this process's BLAS has no packed GEMM: nothing to compare\n";
      return 0;
    }
    const auto loaded = nmt::checkpoint::load_for_inference(checkpoint);
    const auto vocab =
        nmt::checkpoint::checkpoint_vocabulary(checkpoint, loaded.state, loaded.config, {});
    std::vector<std::string> lines;
    nmt::preprocess::LineSource source(input);
    for (std::string line; static_cast<std::int64_t>(lines.size()) < limit && source.next(line);) {
      lines.push_back(line);
    }
    nlohmann::json out = {{"cpu", nmt::bench::cpu_line()}, {"sentences", lines.size()}};
    std::cout << fmt::format("{} sentences, {}; sentences/s per round\n", lines.size(), input);
    for (const bool greedy : {false, true}) {
      nmt::decode::TranslateOptions options;  // beam 4, alpha 0.6; greedy below
      if (greedy) options.decode.strategy = nmt::decode::Strategy::kGreedy;
      std::vector<Mode> modes;
      for (const bool packed : {false, true}) {
        options.packed_weights = packed;
        auto model = nmt::checkpoint::load_for_inference(checkpoint).model;  // one each: packing
        modes.push_back({packed ? "packed" : "plain",
                         std::make_unique<nmt::decode::Translator>(model, vocab, device, options),
                         {},
                         {}});
        modes.back().translator->translate_lines({lines.begin(), lines.begin() + 16});  // warm
      }
      for (int round = 0; round < rounds; ++round) {
        for (auto& mode : modes) {
          const auto start = std::chrono::steady_clock::now();
          const auto translations = mode.translator->translate_lines(lines);
          const double seconds =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          mode.rates.push_back(static_cast<double>(lines.size()) / seconds);
          mode.texts.clear();
          for (const auto& t : translations) mode.texts.push_back(t.texts.front());
        }
      }
      std::int64_t differ = 0;
      for (std::size_t i = 0; i < lines.size(); ++i) {
        differ += modes[0].texts[i] != modes[1].texts[i] ? 1 : 0;
      }
      const std::string name = greedy ? "greedy" : "beam 4";
      for (const auto& mode : modes) {
        std::cout << fmt::format("{:<8}{:<8}", name, mode.name);
        for (const double rate : mode.rates) std::cout << fmt::format("{:>9.1f}", rate);
        std::cout << '\n';
      }
      const double ratio = median(modes[1].rates) / median(modes[0].rates);
      std::cout << fmt::format("{}: packed/plain {:.2f}x, {} of {} translations differ\n", name,
                               ratio, differ, lines.size());
      out[name] = {{"plain", modes[0].rates},
                   {"packed", modes[1].rates},
                   {"ratio", ratio},
                   {"differ", differ}};
    }
    if (!json.empty()) std::ofstream(json) << out.dump(2) << '\n';
    return 0;
  });
}
