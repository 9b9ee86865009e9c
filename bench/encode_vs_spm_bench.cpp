// Encode-and-write throughput of nmt-preprocess against Debian's spm_encode, on the same input,
// the same SentencePiece model and the same number of threads, measured side by side in one run.
// spm_encode has no threads option, so its N-thread figure runs N spm_encode processes on N
// slices of the input at once (what a user would script). Reports pairs/s and the ratio.
//
//   build/bench/encode_vs_spm_bench [--src F --tgt F] [--spm-model M] [--threads N] [--replicate K]

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "apps/tool_main.h"
#include "common/cli.h"
#include "preprocess/pipeline.h"

namespace {

namespace fs = std::filesystem;
using namespace nmt::preprocess;

struct Options {
  std::string src, tgt, spm_model;
  int threads = 2;
  int replicate = 4;
  int repeat = 3;
};

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Writes the pipeline's intermediate file and, for spm_encode, `slices` text files holding the
// same sentences (both sides), split into equal parts. Returns the number of pairs.
std::int64_t prepare_inputs(const Options& o, const fs::path& dir, int slices) {
  std::vector<SentencePair> pairs;
  auto reader = open_corpus(CorpusSpec{o.src, o.tgt});
  SentencePair pair;
  PairCleaner cleaner(CleaningOptions{}, false);
  while (reader->next(pair)) {
    cleaner.apply(pair);
    pairs.push_back(pair);
  }
  std::ofstream clean(dir / "clean.txt");
  std::vector<std::ofstream> text;
  for (int s = 0; s < slices; ++s) text.emplace_back(dir / fmt::format("slice{}.txt", s));
  const std::int64_t total = static_cast<std::int64_t>(pairs.size()) * o.replicate;
  std::int64_t index = 0;
  for (int r = 0; r < o.replicate; ++r) {
    for (const auto& p : pairs) {
      clean << p.source << '\t' << p.target << '\t' << index << '\n';
      auto& out = text[static_cast<std::size_t>(index * slices / total)];
      out << p.source << '\n' << p.target << '\n';
      ++index;
    }
  }
  return total;
}

// Runs spm_encode on every slice at once, one process each; returns the wall time.
double run_spm_encode(const std::string& model, const fs::path& dir, int slices) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<pid_t> children;
  for (int s = 0; s < slices; ++s) {
    const std::string input = (dir / fmt::format("slice{}.txt", s)).string();
    const std::string output = (dir / fmt::format("slice{}.ids", s)).string();
    const pid_t pid = fork();
    if (pid == 0) {
      execlp("spm_encode", "spm_encode", ("--model=" + model).c_str(), "--output_format=id",
             ("--input=" + input).c_str(), ("--output=" + output).c_str(), "--minloglevel=2",
             static_cast<char*>(nullptr));
      _exit(127);
    }
    children.push_back(pid);
  }
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      throw std::runtime_error(
          "spm_encode failed (is the Debian package 'sentencepiece' installed?)");
    }
  }
  return seconds_since(start);
}

double run_ours(const Vocabulary& vocab, const fs::path& dir, int threads, std::int64_t pairs) {
  const fs::path out = dir / fmt::format("shards{}", threads);
  fs::remove_all(out);
  fs::create_directories(out);
  const ShardHeader header{"train", vocab.size(), vocab.sha256(), {}, {}};
  const auto start = std::chrono::steady_clock::now();
  encode_to_shards((dir / "clean.txt").string(), vocab, header, ShardOptions{}, threads,
                   out.string(), pairs);
  return seconds_since(start);
}

std::string ensure_model(const Options& o, const fs::path& dir) {
  if (!o.spm_model.empty()) return o.spm_model;
  std::vector<std::string> sentences;
  auto reader = open_corpus(CorpusSpec{o.src, o.tgt});
  SentencePair pair;
  while (reader->next(pair)) {
    sentences.push_back(pair.source);
    sentences.push_back(pair.target);
  }
  VocabularyOptions options;
  options.vocab_size = 8000;
  const std::string path = (dir / "bench.model").string();
  std::ofstream(path, std::ios::binary) << train_vocabulary(sentences, options);
  return path;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nmt-preprocess encode+write vs spm_encode, same input, model and threads",
               "encode_vs_spm_bench"};
  Options o;
  const char* data = std::getenv("NMT_DATA_DIR");
  const std::string base = data ? data : "../shared/data/multi30k";
  o.src = base + "/train.en.gz";
  o.tgt = base + "/train.de.gz";
  app.add_option("--src", o.src, "Source side")->capture_default_str();
  app.add_option("--tgt", o.tgt, "Target side")->capture_default_str();
  app.add_option("--spm-model", o.spm_model, "Model (default: train an 8k BPE on the input)");
  app.add_option("--threads", o.threads, "Threads (ours) and processes (spm_encode)")
      ->capture_default_str();
  app.add_option("--replicate", o.replicate, "Repeat the corpus K times")->capture_default_str();
  app.add_option("--repeat", o.repeat, "Best of this many timings")->capture_default_str();
  return nmt::apps::run_bench(app, argc, argv, [&] {
    const fs::path dir = fs::temp_directory_path() / fmt::format("encode_bench_{}", ::getpid());
    fs::create_directories(dir);
    const std::string model = ensure_model(o, dir);
    const auto vocab = Vocabulary::load(model);
    std::cout << fmt::format("{:<10}{:>8}{:>16}{:>16}{:>10}\n", "threads", "pairs",
                             "spm_encode p/s", "ours p/s", "ratio");
    for (int threads : {1, o.threads}) {
      const std::int64_t pairs = prepare_inputs(o, dir, threads);
      double spm = 1e30, ours = 1e30;
      for (int r = 0; r < o.repeat; ++r) {
        spm = std::min(spm, run_spm_encode(model, dir, threads));
        ours = std::min(ours, run_ours(vocab, dir, threads, pairs));
      }
      std::cout << fmt::format("{:<10}{:>8}{:>16.0f}{:>16.0f}{:>9.2f}x\n", threads, pairs,
                               pairs / spm, pairs / ours, spm / ours);
      if (threads == o.threads) break;
    }
    fs::remove_all(dir);
    return 0;
  });
}
