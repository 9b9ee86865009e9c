// nmt-preprocess end to end on real data (Multi30k val) and on generated corpora: the round trip
// decodes back to the cleaned input, output bytes do not depend on the thread count, a reused
// vocabulary gives the same ids, and bad input fails with no output left behind. A stop request
// at any point leaves nothing; --overwrite replaces only a previous output, and leftovers of a
// dead run are removed at the next run.

#include "preprocess/pipeline.h"

#include <zlib.h>

#include <filesystem>
#include <set>

#include "common/config_loader.h"
#include "common/sha256.h"
#include "preprocess/output_dir.h"
#include "test_utils.h"
#include "tests/multi30k.h"

namespace nmt::preprocess {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;

std::string data_dir() {
  return testing::multi30k_dir();
}

std::vector<std::string> read_gz_lines(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  std::vector<std::string> lines;
  if (f == nullptr) return lines;
  std::string line;
  char buffer[4096];
  while (gzgets(f, buffer, sizeof buffer) != nullptr) {
    line += buffer;
    if (!line.empty() && line.back() == '\n') {
      line.pop_back();
      lines.push_back(line);
      line.clear();
    }
  }
  if (!line.empty()) lines.push_back(line);
  gzclose(f);
  return lines;
}

// A generated parallel corpus: "source" words and their uppercase "translations".
void write_corpus(const std::string& src, const std::string& tgt, int lines) {
  std::ofstream s(src), t(tgt);
  const std::vector<std::string> words = {"the", "cat",  "sat", "on",   "a",
                                          "mat", "dogs", "run", "fast", "home"};
  for (int i = 0; i < lines; ++i) {
    std::string a, b;
    for (int w = 0; w < 2 + i % 7; ++w) {
      const auto& word = words[static_cast<std::size_t>(i * 3 + w * 5) % words.size()];
      a += (w ? " " : "") + word;
      std::string upper = word;
      for (auto& c : upper) c = static_cast<char>(std::toupper(c));
      b += (w ? " " : "") + upper;
    }
    s << a << "\n";
    t << b << "\n";
  }
}

PreprocessConfig small_config(const std::string& out, const std::string& src,
                              const std::string& tgt) {
  PreprocessConfig config;
  config.out = out;
  config.vocab.vocab_size = 40;
  config.shards.pairs_per_shard = 300;
  config.split("train").corpora.push_back({src, tgt});
  return config;
}

std::map<std::string, std::string> hashes(const fs::path& dir) {
  std::map<std::string, std::string> h;
  for (const auto& entry : fs::directory_iterator(dir)) {
    h[entry.path().filename().string()] = sha256_file(entry.path().string());
  }
  return h;
}

TEST(PreprocessPipeline, Multi30kValRoundTripDecodesToCleanedInput) {
  const std::string en = data_dir() + "/val.en.gz", de = data_dir() + "/val.de.gz";
  if (!fs::exists(en)) GTEST_SKIP() << "Multi30k not found at " << data_dir();
  TempDir dir;
  PreprocessConfig config;
  config.out = dir.file("out");
  config.vocab.vocab_size = 1000;
  config.threads = 2;
  config.split("train").corpora.push_back({en, de});
  config.split("test").corpora.push_back({en, de});
  const auto result = run_preprocess(config);
  EXPECT_EQ(result.manifest.split("test").pairs(), 1014);  // eval splits keep every line
  EXPECT_EQ(result.manifest.split("train").cleaning.read, 1014);

  const auto vocab = Vocabulary::load(config.out + "/spm.model");
  EXPECT_EQ(vocab.sha256(), result.manifest.vocab_sha256);
  const auto test = ShardDataset::open(config.out, "test");
  const auto src_lines = read_gz_lines(en), tgt_lines = read_gz_lines(de);
  ASSERT_EQ(test.size(), static_cast<std::int64_t>(src_lines.size()));
  PairCleaner normaliser(config.cleaning, false);
  int exact = 0;
  for (std::int64_t i = 0; i < test.size(); ++i) {
    const auto pair = test.pair(i);
    ASSERT_EQ(pair.index, i);
    SentencePair expected{src_lines[static_cast<std::size_t>(i)],
                          tgt_lines[static_cast<std::size_t>(i)], 0};
    normaliser.apply(expected);
    // The shards' ids (cached, multi-threaded encoding) are exactly SentencePiece's own.
    ASSERT_EQ(pair.src.to_vector(), vocab.encode(expected.source)) << expected.source;
    ASSERT_EQ(pair.tgt.to_vector(), vocab.encode(expected.target)) << expected.target;
    const bool same = vocab.decode(pair.src.to_vector()) == expected.source &&
                      vocab.decode(pair.tgt.to_vector()) == expected.target;
    EXPECT_TRUE(same) << "pair " << i << ": " << expected.source << " ||| " << expected.target
                      << "\n decoded: " << vocab.decode(pair.src.to_vector()) << " ||| "
                      << vocab.decode(pair.tgt.to_vector());
    exact += same;
  }
  EXPECT_EQ(exact, test.size());
}

TEST(PreprocessPipeline, OutputBytesIdenticalForAnyThreadCount) {
  TempDir dir;
  write_corpus(dir.file("c.src"), dir.file("c.tgt"), 1000);
  std::map<std::string, std::string> reference;
  for (int threads : {1, 2, 5}) {
    auto config = small_config(dir.file("t" + std::to_string(threads)) + "/out", dir.file("c.src"),
                               dir.file("c.tgt"));
    config.threads = threads;
    run_preprocess(config);
    const auto h = hashes(config.out);
    EXPECT_EQ(h.size(), 6u);  // manifest, spm.model and 4 shards of <= 300 pairs
    if (reference.empty()) reference = h;
    EXPECT_EQ(h, reference) << threads << " threads";
  }
}

TEST(PreprocessPipeline, ReusedVocabularyGivesTheSameIds) {
  TempDir dir;
  write_corpus(dir.file("c.src"), dir.file("c.tgt"), 500);
  const auto first = small_config(dir.file("first"), dir.file("c.src"), dir.file("c.tgt"));
  run_preprocess(first);
  PreprocessConfig second;
  second.out = dir.file("second");
  second.spm_model = first.out + "/spm.model";
  second.split("test").corpora.push_back({dir.file("c.src"), dir.file("c.tgt")});
  const auto result = run_preprocess(second);
  const auto a = ShardDataset::open(first.out, "train");
  DatasetOptions same_vocab;
  same_vocab.expect_vocab_sha256 = a.manifest().vocab_sha256;
  const auto b = ShardDataset::open(second.out, "test", same_vocab);
  ASSERT_EQ(a.size(), b.size());
  for (std::int64_t i = 0; i < a.size(); i += 37) {
    EXPECT_EQ(a.pair(i).src.to_vector(), b.pair(i).src.to_vector());
    EXPECT_EQ(a.pair(i).tgt.to_vector(), b.pair(i).tgt.to_vector());
  }
}

// BPE-dropout copies of the train split (sampling.copies): each copy holds every pair, with its
// index, segmented anew (decoding to the same text as the deterministic ids); the copies differ;
// the bytes do not depend on the thread count; the test split is exactly what it is without
// sampling.
TEST(PreprocessPipeline, SampledTrainCopiesSegmentEveryPairAnewAndLeaveEvalSplitsAlone) {
  TempDir dir;
  write_corpus(dir.file("c.src"), dir.file("c.tgt"), 400);
  const auto configure = [&](const std::string& name, int copies, int threads) {
    auto config = small_config(dir.file(name), dir.file("c.src"), dir.file("c.tgt"));
    config.shards.pairs_per_shard = 500;  // a shard ends inside the second copy
    config.split("test").corpora.push_back({dir.file("c.src"), dir.file("c.tgt")});
    config.sampling.copies = copies;
    config.threads = threads;
    run_preprocess(config);
    return config.out;
  };
  const auto plain_dir = configure("plain", 0, 2);
  const auto sampled_dir = configure("sampled", 3, 2);
  EXPECT_EQ(hashes(configure("sampled-1-thread", 3, 1)), hashes(sampled_dir));
  EXPECT_EQ(sha256_file(plain_dir + "/test-00000.h5"), sha256_file(sampled_dir + "/test-00000.h5"));

  const auto vocab = Vocabulary::load(sampled_dir + "/spm.model");
  const auto plain = ShardDataset::open(plain_dir, "train");
  const auto sampled = ShardDataset::open(sampled_dir, "train");
  ASSERT_EQ(plain.size(), 400);
  ASSERT_EQ(sampled.size(), 3 * plain.size());
  EXPECT_EQ(read_manifest(sampled_dir).split("train").cleaning.kept, 400);
  std::vector<int> differ_from_plain(3, 0);
  int copies_differ = 0;
  for (std::int64_t i = 0; i < plain.size(); ++i) {
    const auto p = plain.pair(i);
    const auto src = vocab.decode(p.src.to_vector()), tgt = vocab.decode(p.tgt.to_vector());
    for (std::int64_t copy = 0; copy < 3; ++copy) {
      const auto s = sampled.pair(copy * plain.size() + i);
      ASSERT_EQ(s.index, p.index);
      ASSERT_EQ(vocab.decode(s.src.to_vector()), src);
      ASSERT_EQ(vocab.decode(s.tgt.to_vector()), tgt);
      differ_from_plain[static_cast<std::size_t>(copy)] +=
          s.src.to_vector() != p.src.to_vector() || s.tgt.to_vector() != p.tgt.to_vector();
    }
    copies_differ +=
        sampled.pair(i).src.to_vector() != sampled.pair(plain.size() + i).src.to_vector();
  }
  for (int d : differ_from_plain) EXPECT_GT(d, 40);
  EXPECT_GT(copies_differ, 40);
}

TEST(PreprocessPipeline, BadInputLeavesNoPartialOutput) {
  TempDir dir;
  write_corpus(dir.file("c.src"), dir.file("c.tgt"), 100);
  write_corpus(dir.file("short.tgt"), dir.file("unused"), 99);
  auto config = small_config(dir.file("out"), dir.file("c.src"), dir.file("short.tgt"));
  NMT_EXPECT_THROW_WITH(run_preprocess(config), CorpusError, "c.src", "short.tgt", "100", "99");
  for (const auto& entry : fs::directory_iterator(dir.path())) {
    EXPECT_EQ(entry.path().filename().string().find("out"), std::string::npos)
        << "left behind: " << entry.path();
  }
  config = small_config(dir.file("out"), dir.file("c.src"), dir.file("missing.tgt"));
  NMT_EXPECT_THROW_WITH(run_preprocess(config), CorpusError, "missing.tgt");
  EXPECT_FALSE(fs::exists(dir.file("out")));
}

TEST(PreprocessPipeline, ExistingOutputNeedsOverwrite) {
  TempDir dir;
  write_corpus(dir.file("c.src"), dir.file("c.tgt"), 200);
  auto config = small_config(dir.file("out"), dir.file("c.src"), dir.file("c.tgt"));
  run_preprocess(config);
  NMT_EXPECT_THROW_WITH(run_preprocess(config), std::runtime_error, "exists", "--overwrite");
  config.overwrite = true;
  config.shards.pairs_per_shard = 1000;
  run_preprocess(config);
  EXPECT_EQ(read_manifest(config.out).split("train").shards.size(), 1u);
}

TEST(PreprocessPipeline, ConfigFileIsStrict) {
  TempDir dir;
  testing::write_text(dir.file("p.yaml"),
                      "out: x\nvocab:\n  size: 100\ncorpora:\n  train:\n    - {source: a.tsv, "
                      "format: tsv, columns: [1, 0]}\n");
  const auto config = load_preprocess_config(dir.file("p.yaml"), {"threads=3"});
  EXPECT_EQ(config.vocab.vocab_size, 100);
  EXPECT_EQ(config.threads, 3);
  ASSERT_EQ(config.split("train").corpora.size(), 1u);
  EXPECT_EQ(config.split("train").corpora[0].tsv_source_column, 1);
  EXPECT_EQ(config.split("train").corpora[0].resolved_format(), CorpusFormat::kTsv);
  const auto sampled =
      load_preprocess_config(dir.file("p.yaml"), {"sampling.copies=4", "sampling.alpha=0.2"});
  EXPECT_EQ(sampled.sampling.copies, 4);
  EXPECT_DOUBLE_EQ(sampled.sampling.alpha, 0.2);
  // The manifest's copy of the config (to_yaml) reads back to the same sampling.
  testing::write_text(dir.file("again.yaml"), to_yaml(sampled));
  const auto again = load_preprocess_config(dir.file("again.yaml"));
  EXPECT_EQ(again.sampling.copies, 4);
  EXPECT_EQ(again.sampling.alpha, 0.2);
  NMT_EXPECT_THROW_WITH(load_preprocess_config(dir.file("p.yaml"), {"sampling.alhpa=0.1"}),
                        ConfigError, "sampling.alhpa");
  testing::write_text(dir.file("bad.yaml"), "corpora:\n  train:\n    - {source: a, taget: b}\n");
  NMT_EXPECT_THROW_WITH(load_preprocess_config(dir.file("bad.yaml")), ConfigError, "bad.yaml:3",
                        "corpora.train[0].taget");
  NMT_EXPECT_THROW_WITH(load_preprocess_config(dir.file("p.yaml"), {"vocab.sise=5"}), ConfigError,
                        "vocab.sise");
}

// Names in `dir` that start with `prefix`.
std::set<std::string> entries_starting(const fs::path& dir, const std::string& prefix) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const auto name = entry.path().filename().string();
    if (name.rfind(prefix, 0) == 0) names.insert(name);
  }
  return names;
}

TEST(PreprocessPipeline, StopAtAnyPointLeavesNothing) {
  TempDir dir;
  write_corpus(dir.file("c.src"), dir.file("c.tgt"), 400);
  auto config = small_config(dir.file("out"), dir.file("c.src"), dir.file("c.tgt"));
  config.split("valid").corpora.push_back({dir.file("c.src"), dir.file("c.tgt")});
  int polls = 0;
  run_preprocess(config, [&] { return ++polls < 0; });  // counts the polls of a whole run
  ASSERT_GT(polls, 800);                                // every pair of both splits, and more
  fs::remove_all(config.out);
  // The first poll (cleaning), the middle (cleaning valid), the last three (encoding and the
  // check before publishing), each counted from the end of the run. A run's number of polls may
  // differ from the first one's (threads poll as they go): a run that ends before its stop polled
  // fewer times, and is run again to stop at the same distance from its own end.
  for (const int from_end : {polls - 1, polls / 2, 2, 1, 0}) {
    int total = polls;
    bool stopped = false;
    for (int attempt = 0; attempt < 5 && !stopped; ++attempt) {
      const int stop_at = total - from_end;
      int n = 0;
      try {
        run_preprocess(config, [&] { return ++n >= stop_at; });
        ASSERT_LT(n, stop_at) << "a run that polled its stop went on";
        total = n;
        fs::remove_all(config.out);
      } catch (const PreprocessStopped&) {
        stopped = true;
      }
    }
    EXPECT_TRUE(stopped) << "no run stopped " << from_end << " polls before its end";
    EXPECT_EQ(entries_starting(dir.path(), "out"), std::set<std::string>{}) << from_end;
  }
}

TEST(PreprocessPipeline, OverwriteReplacesOnlyAPreviousOutput) {
  TempDir dir;
  write_corpus(dir.file("c.src"), dir.file("c.tgt"), 200);
  auto config = small_config(dir.file("out"), dir.file("c.src"), dir.file("c.tgt"));
  config.overwrite = true;
  // Not an output: refused, untouched.
  fs::create_directories(config.out);
  testing::write_text(config.out + "/notes.txt", "mine");
  NMT_EXPECT_THROW_WITH(run_preprocess(config), std::runtime_error, config.out.c_str(),
                        "--overwrite", "no manifest.json");
  EXPECT_EQ(entries_starting(config.out, ""), std::set<std::string>{"notes.txt"});
  fs::remove(config.out + "/notes.txt");
  fs::remove(config.out);
  // An output with a file of someone else's in it: refused, naming the file, untouched.
  run_preprocess(config);
  const auto before = hashes(config.out);
  testing::write_text(config.out + "/notes.txt", "mine");
  NMT_EXPECT_THROW_WITH(run_preprocess(config), std::runtime_error, config.out.c_str(),
                        "notes.txt");
  fs::create_directories(config.out + "/sub");
  fs::remove(config.out + "/notes.txt");
  NMT_EXPECT_THROW_WITH(run_preprocess(config), std::runtime_error, "sub");
  fs::remove(config.out + "/sub");
  EXPECT_EQ(hashes(config.out), before);
  // A previous output: replaced, with nothing set aside left over.
  config.shards.pairs_per_shard = 1000;
  run_preprocess(config);
  EXPECT_EQ(read_manifest(config.out).split("train").shards.size(), 1u);
  EXPECT_EQ(entries_starting(dir.path(), "out"), std::set<std::string>{"out"});
}

TEST(PreprocessPipeline, LeftoversOfADeadRunAreRemovedNextTime) {
  TempDir dir;
  write_corpus(dir.file("c.src"), dir.file("c.tgt"), 200);
  auto config = small_config(dir.file("out"), dir.file("c.src"), dir.file("c.tgt"));
  // PIDs above any pid_max: their processes do not exist.
  const std::string dead = dir.file("out.tmp-999999991"), foreign = dir.file("out.tmp-999999992");
  const std::string live = dir.file("out.tmp-1");  // init: alive
  for (const auto& d : {dead, foreign, live}) fs::create_directories(d);
  testing::write_text(dead + "/train.clean.txt", "a\tb\t0\n");
  testing::write_text(dead + "/train-00000.h5.tmp.999999991", "");
  testing::write_text(foreign + "/thesis.tex", "mine");
  testing::write_text(live + "/train.clean.txt", "a\tb\t0\n");
  run_preprocess(config);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(foreign + "/thesis.tex"));
  EXPECT_TRUE(fs::exists(live + "/train.clean.txt"));
  // A previous output set aside by an --overwrite that died before removing it: removed now that
  // the output is in place.
  fs::copy(config.out, dir.file("out.old-999999993"));
  config.overwrite = true;
  run_preprocess(config);
  EXPECT_FALSE(fs::exists(dir.file("out.old-999999993")));
}

}  // namespace
}  // namespace nmt::preprocess
