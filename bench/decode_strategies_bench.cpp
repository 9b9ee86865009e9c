// Every decoding strategy of decode() side by side on the same model and the same sources in one
// run: greedy, beam search (the paper's beam 4, alpha 0.6), beam search with the repetition
// options, sampling (one sample, and four ranked), and diverse beam search. Prints seconds,
// sentences/s, output tokens/s (each sentence's best hypothesis, EOS included) and the tokens/s
// of every hypothesis the search returned. Each strategy first decodes one batch untimed.
//
// Without --checkpoint the model is a random Transformer of the given size, and the sources are
// random ids (a random model rarely says EOS, so outputs mostly run to the length cap: the
// figures compare the strategies' cost per token, not their output lengths).
//
//   build/bench/decode_strategies_bench [--checkpoint C.h5] [--sentences 64] [--batch 16]
//       [--device cuda] [--threads N] [--only "beam 4"] [--json FILE]

#include <ATen/ops/randint.h>
#include <ATen/ops/zeros.h>
#include <fmt/format.h>
#include <torch/utils.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "apps/tool_main.h"
#include "bench/bench_device.h"
#include "common/cli.h"
#include "preprocess/vocabulary.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/checkpoint/checkpoint_model.h"
#include "trainer/decode/decode.h"
#include "trainer/runtime/blas_backend.h"
#include "trainer/runtime/device.h"

namespace {

using nmt::decode::DecodeOptions;
using nmt::decode::Strategy;

struct Case {
  std::string name;
  DecodeOptions options;
};

struct Figures {
  double seconds = 0;
  std::int64_t best_tokens = 0;  // each sentence's best hypothesis + EOS
  std::int64_t all_tokens = 0;   // every returned hypothesis + EOS
};

std::vector<Case> cases(std::uint64_t seed) {
  std::vector<Case> all;
  const auto add = [&](std::string name, Strategy strategy, auto&& tweak) {
    DecodeOptions o;
    o.strategy = strategy;
    o.sampling.seed = seed;
    tweak(o);
    all.push_back({std::move(name), o});
  };
  add("greedy", Strategy::kGreedy, [](DecodeOptions&) {});
  add("beam 4", Strategy::kBeam, [](DecodeOptions&) {});
  add("beam 4 no-repeat 3", Strategy::kBeam,
      [](DecodeOptions& o) { o.repetition.no_repeat_ngram_size = 3; });
  add("beam 4 rep-pen 1.2", Strategy::kBeam, [](DecodeOptions& o) { o.repetition.penalty = 1.2; });
  add("sample p0.9", Strategy::kSample, [](DecodeOptions& o) { o.sampling.top_p = 0.9; });
  add("sample k10 x4", Strategy::kSample, [](DecodeOptions& o) {
    o.sampling.top_k = 10;
    o.sampling.num_samples = 4;
    o.nbest = 4;
  });
  add("diverse 4x1", Strategy::kDiverseBeam, [](DecodeOptions& o) { o.nbest = 4; });
  add("diverse 2x2", Strategy::kDiverseBeam, [](DecodeOptions& o) {
    o.diverse.groups = 2;
    o.nbest = 4;
  });
  return all;
}

// Random sources [count, longest] int64: ids in [4, vocab), lengths in [min, max], EOS, 0 padding.
at::Tensor random_sources(std::int64_t count, std::int64_t min_len, std::int64_t max_len,
                          std::int64_t vocab, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<std::int64_t> length(min_len, max_len), id(4, vocab - 1);
  auto src = at::zeros({count, max_len + 1}, at::TensorOptions().dtype(at::kLong));
  auto* data = src.data_ptr<std::int64_t>();
  for (std::int64_t s = 0; s < count; ++s) {
    const auto n = length(rng);
    for (std::int64_t t = 0; t < n; ++t) data[s * (max_len + 1) + t] = id(rng);
    data[s * (max_len + 1) + n] = nmt::preprocess::kEosId;
  }
  return src;
}

Figures run(nmt::model::Transformer& model, const at::Tensor& src, std::int64_t batch,
            const DecodeOptions& options) {
  nmt::decode::decode(model, src.narrow(0, 0, std::min(batch, src.size(0))), options);  // warm-up
  Figures f;
  const auto start = std::chrono::steady_clock::now();
  for (std::int64_t first = 0; first < src.size(0); first += batch) {
    const auto rows = src.narrow(0, first, std::min(batch, src.size(0) - first));
    for (const auto& nbest : nmt::decode::decode(model, rows, options)) {
      f.best_tokens += static_cast<std::int64_t>(nbest.front().tokens.size()) + 1;
      for (const auto& h : nbest) f.all_tokens += static_cast<std::int64_t>(h.tokens.size()) + 1;
    }
  }
  f.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return f;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Decoding strategies side by side", "decode_strategies_bench"};
  std::string checkpoint, json, only;
  nmt::bench::DeviceFlags device_flags;
  std::int64_t sentences = 64, batch = 16, min_len = 8, max_len = 24, offset = 20;
  std::int64_t vocab = 8000, layers = 3, d_model = 256;
  std::uint64_t seed = 1;
  app.add_option("--checkpoint", checkpoint, "Trained checkpoint (default: a random model)");
  app.add_option("--sentences", sentences, "Random sources to decode")->capture_default_str();
  app.add_option("--batch", batch, "Sentences per decode() call")->capture_default_str();
  app.add_option("--min-len", min_len, "Shortest source")->capture_default_str();
  app.add_option("--max-len", max_len, "Longest source")->capture_default_str();
  app.add_option("--max-len-offset", offset, "Output tokens <= source + this")
      ->capture_default_str();
  app.add_option("--vocab", vocab, "Random model: vocabulary")->capture_default_str();
  app.add_option("--layers", layers, "Random model: layers per stack")->capture_default_str();
  app.add_option("--d-model", d_model, "Random model: width (d_ff 4x, heads of 64)")
      ->capture_default_str();
  app.add_option("--seed", seed, "Model, sources and sampling seed")->capture_default_str();
  nmt::bench::add_device_flags(app, device_flags);
  app.add_option("--json", json, "Also write the figures to this JSON file");
  app.add_option("--only", only, "Run only the strategies whose name contains this");
  return nmt::apps::run_bench(app, argc, argv, [&] {
    const auto device = nmt::bench::select_device(device_flags);
    std::cout << nmt::bench::cpu_line() << '\n';
    nmt::model::ModelConfig config;
    if (checkpoint.empty()) {
      config.vocab_size = vocab;
      config.layers = layers;
      config.d_model = d_model;
      config.d_ff = 4 * d_model;
      config.heads = std::max<std::int64_t>(1, d_model / 64);
      config.d_k = config.d_v = d_model / config.heads;
      config.max_positions = max_len + offset + 8;
    } else {
    }
    torch::manual_seed(seed);
    nmt::model::Transformer model = checkpoint.empty()
                                        ? nmt::model::Transformer(config)
                                        : nmt::checkpoint::load_for_inference(checkpoint).model;
    config = model->config();
    model->to(device);
    model->eval();
    const auto src =
        random_sources(sentences, min_len, max_len, config.vocab_size, seed).to(device);
    std::cout << fmt::format("{:<20}{:>10}{:>13}{:>12}{:>16}\n", "strategy", "seconds",
                             "sentences/s", "tokens/s", "all hyps tok/s");
    nlohmann::json figures = nlohmann::json::object();
    for (auto& c : cases(seed)) {
      if (c.name.find(only) == std::string::npos) continue;
      c.options.beam.max_length_offset = offset;
      const auto f = run(model, src, batch, c.options);
      const double n = static_cast<double>(sentences);
      std::cout << fmt::format("{:<20}{:>10.2f}{:>13.1f}{:>12.1f}{:>16.1f}\n", c.name, f.seconds,
                               n / f.seconds, static_cast<double>(f.best_tokens) / f.seconds,
                               static_cast<double>(f.all_tokens) / f.seconds)
                << std::flush;
      figures[c.name] = {{"seconds", f.seconds},
                         {"sentences_per_second", n / f.seconds},
                         {"tokens_per_second", static_cast<double>(f.best_tokens) / f.seconds},
                         {"all_tokens_per_second", static_cast<double>(f.all_tokens) / f.seconds}};
    }
    std::cout << fmt::format(
        "{} sentences in batches of {}, {}, model d_model {} x {} layers, "
        "vocabulary {}{}\n",
        sentences, batch, nmt::runtime::describe_device(device), config.d_model, config.layers,
        config.vocab_size, checkpoint.empty() ? " (random)" : "");
    if (!json.empty()) {
      std::ofstream file(json);
      file << nlohmann::json{{"device", device.str()},
                             {"sentences", sentences},
                             {"batch", batch},
                             {"strategies", figures}}
                  .dump(2)
           << '\n';
      if (!file) throw std::runtime_error("cannot write " + json);
    }
    return 0;
  });
}
