#include "preprocess/pipeline.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <random>
#include <stdexcept>
#include <thread>

#include "common/atomic_file.h"
#include "common/mix64.h"
#include "common/progress.h"
#include "preprocess/output_dir.h"

namespace nmt::preprocess {
namespace {

namespace fs = std::filesystem;

void check_stop(const StopCheck& stop) {
  if (stop && stop()) throw PreprocessStopped();
}

// Uniform sample of at most `capacity` sentences from a stream (Algorithm R), seeded, so the
// vocabulary is reproducible and its memory bounded whatever the corpus size.
class ReservoirSample {
 public:
  ReservoirSample(std::int64_t capacity, std::uint32_t seed) : capacity_(capacity), rng_(seed) {}
  void offer(const std::string& sentence) {
    ++seen_;
    if (static_cast<std::int64_t>(items_.size()) < capacity_) {
      items_.push_back(sentence);
      return;
    }
    const auto j = std::uniform_int_distribution<std::int64_t>(0, seen_ - 1)(rng_);
    if (j < capacity_) items_[static_cast<std::size_t>(j)] = sentence;
  }
  const std::vector<std::string>& items() const { return items_; }
  std::vector<std::string> take() { return std::move(items_); }  // the sample, leaving it empty
  std::int64_t seen() const { return seen_; }

 private:
  std::int64_t capacity_;
  std::int64_t seen_ = 0;
  std::mt19937_64 rng_;
  std::vector<std::string> items_;
};

struct CleanedSplit {
  std::string file;  // source \t target \t index, one pair a line
  CleaningStats stats;
};

std::int64_t total_bytes(const std::vector<CorpusSpec>& corpora) {
  std::int64_t total = 0;
  for (const auto& c : corpora) {
    std::error_code ec;
    total += static_cast<std::int64_t>(fs::file_size(c.source, ec));
    if (!c.target.empty()) total += static_cast<std::int64_t>(fs::file_size(c.target, ec));
  }
  return std::max<std::int64_t>(total, 1);
}

// A failed write of `file`, with the cause the system gave (No space left on device, ...).
[[noreturn]] void write_failed(const std::string& file) {
  const int error = errno;
  throw std::runtime_error(fmt::format("{}: write failed: {}", file,
                                       error != 0 ? std::strerror(error) : "unknown cause"));
}

CleanedSplit clean_split(const SplitCorpora& split, const CleaningOptions& options,
                         const fs::path& tmp, ReservoirSample* sample, const StopCheck& stop) {
  CleanedSplit result{(tmp / (split.name + ".clean.txt")).string(), {}};
  std::ofstream out(result.file, std::ios::binary);
  if (!out) throw std::runtime_error(result.file + ": cannot create temporary file");
  PairCleaner cleaner(options, split.name == "train" || options.filter_eval_splits);
  ProgressMeter progress("clean " + split.name, "pairs");
  const double all_bytes = static_cast<double>(total_bytes(split.corpora));
  double done_bytes = 0;
  std::int64_t index = 0;
  for (const auto& spec : split.corpora) {
    spdlog::info("reading {} corpus {}", split.name, spec.describe());
    auto reader = open_corpus(spec);
    SentencePair pair;
    while (reader->next(pair)) {
      check_stop(stop);
      if (cleaner.apply(pair)) {
        out << pair.source << '\t' << pair.target << '\t' << index << '\n';
        if (!out) write_failed(result.file);  // at once, while errno still says why
        if (sample != nullptr) {
          sample->offer(pair.source);
          sample->offer(pair.target);
        }
      }
      ++index;
      progress.update(index, (done_bytes + reader->progress() * reader->total_bytes()) / all_bytes);
    }
    done_bytes += static_cast<double>(reader->total_bytes());
  }
  errno = 0;
  out.close();
  if (!out) write_failed(result.file);
  progress.finish(index);
  result.stats = cleaner.stats();
  return result;
}

void log_cleaning(const std::string& split, const CleaningStats& s) {
  std::string dropped, repaired;
  for (const auto& [reason, n] : s.dropped) dropped += fmt::format(" {}={}", reason, n);
  for (const auto& [reason, n] : s.repaired) repaired += fmt::format(" {}={}", reason, n);
  spdlog::info("{}: read {}, kept {}, dropped {}{}{}", split, with_thousands(s.read),
               with_thousands(s.kept), with_thousands(s.dropped_total()),
               dropped.empty() ? "" : " (" + dropped.substr(1) + ")",
               repaired.empty() ? "" : "; repaired:" + repaired);
}

struct EncodedPair {
  std::vector<std::int32_t> src, tgt;
  std::int64_t index = 0;
};

// Splits "source\ttarget\tindex" (the cleaner guarantees no tabs inside the text).
void parse_clean_line(const std::string& line, std::string& src, std::string& tgt,
                      std::int64_t& index) {
  const auto a = line.find('\t');
  const auto b = line.find('\t', a + 1);
  if (a == std::string::npos || b == std::string::npos) {
    throw std::runtime_error("corrupt intermediate line: " + line.substr(0, 80));
  }
  src.assign(line, 0, a);
  tgt.assign(line, a + 1, b - a - 1);
  index = std::stoll(line.substr(b + 1));
}

// Seeds of neighbouring pairs and copies share no visible structure.
std::uint64_t mix64(std::uint64_t x) {
  return splitmix64_finalize(x + kSplitMix64Gamma);
}

// How one pass over the cleaned pairs segments them: deterministically (through the cache), or
// sampled with a seed fixed by (sampling seed, copy, pair index, side), so the bytes do not depend
// on threads or blocks.
struct Segmentation {
  const Vocabulary* vocab = nullptr;
  const SamplingOptions* sampling = nullptr;  // null: deterministic
  int copy = 0;

  void encode(CachedEncoder& encoder, const std::string& text, std::int64_t index, int side,
              std::vector<std::int32_t>& ids) const {
    if (sampling == nullptr) {
      encoder.encode(text, ids);
      return;
    }
    const std::uint64_t seed =
        mix64(mix64(mix64(static_cast<std::uint64_t>(sampling->seed)) ^
                    static_cast<std::uint64_t>(copy)) ^
              (static_cast<std::uint64_t>(index) * 2 + static_cast<std::uint64_t>(side)));
    ids = vocab->sample_encode(text, sampling->alpha, seed);
  }
};

// Encodes lines into out with one encoder per thread: each thread owns a contiguous slice, and
// cached encoding gives exactly the ids of uncached encoding (and a sampled one depends only on
// its pair), so the result does not depend on the number of threads.
void encode_block(std::vector<CachedEncoder>& encoders, const Segmentation& segmentation,
                  const std::vector<std::string>& lines, std::vector<EncodedPair>& out) {
  const int threads = static_cast<int>(encoders.size());
  out.resize(lines.size());
  const auto work = [&](std::size_t begin, std::size_t end, CachedEncoder& encoder) {
    std::string src, tgt;
    for (std::size_t i = begin; i < end; ++i) {
      parse_clean_line(lines[i], src, tgt, out[i].index);
      segmentation.encode(encoder, src, out[i].index, 0, out[i].src);
      segmentation.encode(encoder, tgt, out[i].index, 1, out[i].tgt);
    }
  };
  const std::size_t n = lines.size();
  const std::size_t t =
      std::min<std::size_t>(static_cast<std::size_t>(threads), std::max<std::size_t>(n, 1));
  std::vector<std::thread> pool;
  for (std::size_t k = 1; k < t; ++k) {
    pool.emplace_back(work, n * k / t, n * (k + 1) / t, std::ref(encoders[k]));
  }
  work(0, n / t, encoders[0]);
  for (auto& th : pool) th.join();
}

// SentencePiece's trainer cannot be interrupted: it runs on a thread of its own, which owns its
// inputs, while this one polls for a stop; on a stop it is left running (PreprocessStopped).
std::string train_vocabulary_stoppably(std::vector<std::string> sentences,
                                       const VocabularyOptions& options, const StopCheck& stop) {
  if (!stop) return train_vocabulary(sentences, options);
  struct Job {
    std::vector<std::string> sentences;
    VocabularyOptions options;
    std::promise<std::string> model;
  };
  auto job = std::make_shared<Job>(Job{std::move(sentences), options, {}});
  auto model = job->model.get_future();
  std::thread worker([job] {
    try {
      job->model.set_value(train_vocabulary(job->sentences, job->options));
    } catch (...) {
      job->model.set_exception(std::current_exception());
    }
  });
  while (model.wait_for(std::chrono::milliseconds(100)) != std::future_status::ready) {
    if (stop()) {
      worker.detach();
      throw PreprocessStopped();
    }
  }
  worker.join();
  return model.get();
}

Vocabulary prepare_vocabulary(const PreprocessConfig& config, ReservoirSample& sample,
                              const fs::path& tmp, const StopCheck& stop) {
  std::string model;
  if (!config.spm_model.empty()) {
    model = Vocabulary::load(config.spm_model).serialized();
    spdlog::info("vocabulary: reusing {}", config.spm_model);
  } else {
    const auto& options = config.vocab;
    spdlog::info("vocabulary: training {} with {} pieces on {} of {} sentences", options.model_type,
                 options.vocab_size,
                 with_thousands(static_cast<std::int64_t>(sample.items().size())),
                 with_thousands(sample.seen()));
    const Heartbeat heartbeat("vocabulary training");
    model = train_vocabulary_stoppably(sample.take(), options, stop);
  }
  write_file_atomically((tmp / kVocabularyFile).string(), model);
  return Vocabulary::from_serialized(model, kVocabularyFile);
}

}  // namespace

std::vector<ShardInfo> encode_to_shards(const std::string& clean_file, const Vocabulary& vocab,
                                        const ShardHeader& header, const ShardOptions& options,
                                        int threads, const std::string& dir,
                                        std::int64_t expected_pairs, const StopCheck& stop,
                                        const SamplingOptions& sampling) {
  sampling.validate();
  const int passes = std::max(sampling.copies, 1);
  ShardWriter writer(dir, header, options.pairs_per_shard, options.compression);
  ProgressMeter progress("encode " + header.split, "pairs");
  constexpr std::size_t kBlock = 16384;
  std::vector<std::string> lines;
  std::vector<EncodedPair> encoded;
  std::vector<CachedEncoder> encoders(static_cast<std::size_t>(threads), CachedEncoder(vocab));
  std::int64_t done = 0;
  std::string line;
  for (int copy = 0; copy < passes; ++copy) {
    std::ifstream in(clean_file, std::ios::binary);
    if (!in) throw std::runtime_error(clean_file + ": cannot open intermediate file");
    const Segmentation segmentation{&vocab, sampling.copies > 0 ? &sampling : nullptr, copy};
    while (true) {
      lines.clear();
      while (lines.size() < kBlock && std::getline(in, line)) lines.push_back(line);
      if (lines.empty()) break;
      check_stop(stop);
      encode_block(encoders, segmentation, lines, encoded);
      for (const auto& p : encoded) writer.add(p.src, p.tgt, p.index);
      done += static_cast<std::int64_t>(lines.size());
      progress.update(
          done, expected_pairs > 0 ? static_cast<double>(done) / (expected_pairs * passes) : -1.0);
    }
  }
  progress.finish(done);
  return writer.finish();
}

namespace {

// Fails before any work when an input is missing or unreadable, rather than after the train split.
void check_inputs_readable(const PreprocessConfig& config) {
  for (const auto& split : config.splits) {
    for (const auto& c : split.corpora) {
      for (const auto& path : {c.source, c.target}) {
        if (path.empty()) continue;
        std::ifstream probe(path, std::ios::binary);
        if (!probe) {
          throw CorpusError(
              fmt::format("{} corpus: cannot open {}: {}", split.name, path, std::strerror(errno)));
        }
      }
    }
  }
  if (!config.spm_model.empty() && !fs::exists(config.spm_model)) {
    throw std::runtime_error(config.spm_model + ": SentencePiece model not found (--spm-model)");
  }
}

}  // namespace

PreprocessResult run_preprocess(const PreprocessConfig& config, const StopCheck& stop) {
  config.validate();
  check_inputs_readable(config);
  const fs::path out = output_path(config.out);
  clean_stale_leftovers(out);
  if (fs::exists(fs::symlink_status(out))) {
    if (!config.overwrite) {
      throw std::runtime_error(out.string() + ": output directory exists (use --overwrite)");
    }
    check_replaceable(out);
  }
  TempOutputDir tmp(out);
  PreprocessResult result;
  const bool learn_vocab = config.spm_model.empty();
  ReservoirSample sample(config.vocab.max_sentences, config.vocab.seed);

  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::pair<const SplitCorpora*, CleanedSplit>> cleaned;
  for (const auto& split : config.splits) {
    if (split.corpora.empty()) continue;
    const bool sample_here = learn_vocab && split.name == "train";
    cleaned.emplace_back(&split, clean_split(split, config.cleaning, tmp.path(),
                                             sample_here ? &sample : nullptr, stop));
    log_cleaning(split.name, cleaned.back().second.stats);
  }
  const auto t1 = std::chrono::steady_clock::now();
  check_stop(stop);
  const Vocabulary vocab = prepare_vocabulary(config, sample, tmp.path(), stop);
  const auto t2 = std::chrono::steady_clock::now();

  Manifest& manifest = result.manifest;
  manifest.vocab_sha256 = vocab.sha256();
  manifest.vocab_size = vocab.size();
  manifest.vocab_type = learn_vocab ? config.vocab.model_type : "reused";
  manifest.config = to_yaml(config);
  for (const auto& [split, clean] : cleaned) {
    check_stop(stop);
    SplitManifest entry;
    entry.name = split->name;
    for (const auto& c : split->corpora) entry.sources.push_back(c.describe());
    entry.cleaning = clean.stats;
    const ShardHeader header{split->name, vocab.size(), vocab.sha256(), entry.sources, clean.stats};
    // Only the train split is sampled: validation and translation see what a user's text gets.
    const bool sampled = split->name == "train" && config.sampling.copies > 0;
    if (sampled) {
      spdlog::info("train: {} copies, each segmented with sampling (alpha {}, seed {})",
                   config.sampling.copies, config.sampling.alpha, config.sampling.seed);
    }
    entry.shards = encode_to_shards(clean.file, vocab, header, config.shards, config.threads,
                                    tmp.path().string(), clean.stats.kept, stop,
                                    sampled ? config.sampling : SamplingOptions{});
    fs::remove(clean.file);
    manifest.splits.push_back(std::move(entry));
  }
  write_manifest(tmp.path().string(), manifest);
  const auto t3 = std::chrono::steady_clock::now();
  check_stop(stop);
  tmp.publish(out, config.overwrite);
  result.seconds_clean = std::chrono::duration<double>(t1 - t0).count();
  result.seconds_vocab = std::chrono::duration<double>(t2 - t1).count();
  result.seconds_encode = std::chrono::duration<double>(t3 - t2).count();
  return result;
}

}  // namespace nmt::preprocess
