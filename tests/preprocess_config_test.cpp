// nmt-preprocess's YAML: one field list loads it, writes the manifest's copy (to_yaml) and
// documents it; the copy's bytes, the strictness and the error locations are the promises here.

#include "preprocess/preprocess_config.h"

#include <string>
#include <utility>
#include <vector>

#include "common/config_loader.h"
#include "test_utils.h"

namespace nmt::preprocess {
namespace {

using testing::TempDir;
using testing::write_text;

PreprocessConfig sample_config() {
  PreprocessConfig c;
  c.out = "out";
  c.threads = 4;
  c.overwrite = true;
  c.split("train").corpora.push_back({"a.en", "a.de", CorpusFormat::kAuto, 0, 1});
  c.split("train").corpora.push_back({"b.tsv", "", CorpusFormat::kAuto, 2, 0});
  c.split("train").corpora.push_back({"c.txt", "", CorpusFormat::kTsv, 0, 1});
  c.split("valid").corpora.push_back({"v.en.sgm", "v.de.sgm", CorpusFormat::kAuto, 0, 1});
  c.vocab.model_type = "unigram";
  c.vocab.vocab_size = 8000;
  c.vocab.seed = 42;
  c.cleaning.dedupe = true;
  c.cleaning.max_ratio = 2.5;
  c.shards.pairs_per_shard = 1000;
  c.shards.compression = 4;
  c.sampling.copies = 2;
  c.sampling.alpha = 0.2;
  c.sampling.seed = 7;
  return c;
}

// Expects loading the config `yaml`, written to `file`, to throw ConfigError whose message holds
// every one of `parts`.
void expect_refused(const std::string& file, const std::string& yaml,
                    const std::vector<std::string>& parts) {
  write_text(file, yaml);
  try {
    load_preprocess_config(file);
    ADD_FAILURE() << "expected ConfigError from:\n" << yaml;
  } catch (const ConfigError& e) {
    for (const std::string& part : parts) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos)
          << "message '" << e.what() << "' lacks '" << part << "'";
    }
  }
}

// The manifest's copy of the config: what it holds and how it is written, byte for byte (two runs
// with the same inputs write the same manifest.json), without the output directory and threads.
TEST(PreprocessConfig, ManifestCopyIsStable) {
  EXPECT_EQ(to_yaml(sample_config()),
            "spm_model: \"\"\n"
            "corpora:\n"
            "  train:\n"
            "    - {source: a.en, target: a.de, format: text}\n"
            "    - {source: b.tsv, format: tsv, columns: [2, 0]}\n"
            "    - {source: c.txt, format: tsv, columns: [0, 1]}\n"
            "  valid:\n"
            "    - {source: v.en.sgm, target: v.de.sgm, format: sgml}\n"
            "  test:\n"
            "    []\n"
            "vocab:\n"
            "  type: unigram\n"
            "  size: 8000\n"
            "  character_coverage: 1.0\n"
            "  sample_sentences: 1000000\n"
            "  max_sentence_length: 4192\n"
            "  threads: 1\n"
            "  seed: 42\n"
            "cleaning:\n"
            "  filter_eval_splits: false\n"
            "  min_words: 1\n"
            "  max_words: 250\n"
            "  max_chars: 2000\n"
            "  max_ratio: 2.5\n"
            "  dedupe: true\n"
            "shards:\n"
            "  pairs_per_shard: 1000\n"
            "  compression: 4\n"
            "sampling:\n"
            "  copies: 2\n"
            "  alpha: 0.2\n"  // the shortest form that reads back exactly
            "  seed: 7\n");
}

TEST(PreprocessConfig, ManifestCopyReadsBack) {
  TempDir dir;
  const auto original = sample_config();
  write_text(dir.file("copy.yaml"), to_yaml(original));
  const auto again = load_preprocess_config(dir.file("copy.yaml"), {"out=out"});
  EXPECT_EQ(to_yaml(again), to_yaml(original));
  ASSERT_EQ(again.split("train").corpora.size(), 3u);
  EXPECT_EQ(again.split("train").corpora[1].tsv_source_column, 2);
  EXPECT_EQ(again.split("train").corpora[1].tsv_target_column, 0);
  EXPECT_EQ(again.vocab.seed, 42u);
  EXPECT_EQ(again.threads, 1);  // not in the copy: the default
}

TEST(PreprocessConfig, EmptyPathKeepsTheDefaults) {
  const auto config = load_preprocess_config("", {});
  EXPECT_EQ(to_yaml(config), to_yaml(PreprocessConfig{}));
  EXPECT_EQ(config.vocab.vocab_size, 37000);
  EXPECT_EQ(config.threads, 1);
}

TEST(PreprocessConfig, ErrorsNameFileLineAndKey) {
  TempDir dir;
  const auto file = dir.file("p.yaml");
  // Each config with what its error must name.
  const std::vector<std::pair<std::string, std::vector<std::string>>> refused = {
      {"out: x\nthreads: many\n", {"p.yaml:2:", "threads", "expected an integer, got 'many'"}},
      {"out: x\nshards:\n  pairs: 5\n",
       {"p.yaml:3:", "unknown key 'shards.pairs'", "pairs_per_shard"}},
      {"corpora:\n  train:\n    - {target: b}\n",
       {"p.yaml:3:", "corpora.train[0].source", "every corpus needs a source file"}},
      {"corpora:\n  valid:\n    - {source: a, format: csv}\n",
       {"p.yaml:3:", "corpora.valid[0].format", "csv"}},
      {"corpora:\n  test:\n    - {source: a.tsv, columns: [1, 2, 3]}\n",
       {"p.yaml:3:", "corpora.test[0].columns", "[source column, target column]"}},
      {"corpora:\n  dev: []\n", {"p.yaml:2:", "unknown key 'corpora.dev'", "test, train, valid"}},
  };
  for (const auto& [yaml, parts] : refused) expect_refused(file, yaml, parts);
  NMT_EXPECT_THROW_WITH(load_preprocess_config("", {"vocab.seed=-1"}), ConfigError, "vocab.seed",
                        ">= 0");
}

// A corpus's keys take no null; its target takes "" (none, as for TSV), its source does not.
TEST(PreprocessConfig, CorporaTakeNoNullAndOnlyTheTargetEmpty) {
  TempDir dir;
  const auto file = dir.file("p.yaml");
  const std::vector<std::pair<std::string, std::vector<std::string>>> refused = {
      {"corpora:\n  train:\n    - {source: a.tsv, target: }\n",
       {"p.yaml:3:", "corpora.train[0].target: no value (YAML null)"}},
      {"corpora:\n  train:\n    - {source: ~}\n",
       {"p.yaml:3:", "corpora.train[0].source: no value (YAML null)"}},
      {"corpora:\n  train:\n    - {source: \"\"}\n",
       {"p.yaml:3:", "corpora.train[0].source: empty value"}},
      {"corpora:\n  valid:\n    -\n", {"p.yaml:2:", "corpora.valid: item 0: no value (YAML null)"}},
  };
  for (const auto& [yaml, parts] : refused) expect_refused(file, yaml, parts);
  write_text(file, "corpora:\n  train:\n    - {source: a.tsv, target: \"\"}\n");
  const auto config = load_preprocess_config(file);
  ASSERT_EQ(config.split("train").corpora.size(), 1u);
  EXPECT_EQ(config.split("train").corpora[0].target, "");
}

// spm_model "" (learn one) from YAML and from `--set spm_model=`; vocab.type takes neither.
TEST(PreprocessConfig, EmptyStringsWhereTheyMeanNone) {
  TempDir dir;
  const auto file = dir.file("p.yaml");
  write_text(file, "spm_model: \"\"\nvocab:\n  type: unigram\n");
  EXPECT_EQ(load_preprocess_config(file).spm_model, "");
  EXPECT_EQ(load_preprocess_config(file, {"spm_model=m.model", "spm_model="}).spm_model, "");
  NMT_EXPECT_THROW_WITH(load_preprocess_config(file, {"vocab.type="}), ConfigError,
                        "--set vocab.type=: empty value; expected a non-empty string");
  expect_refused(file, "vocab:\n  type:\n", {"p.yaml:2:3: vocab.type: no value (YAML null)"});
}

TEST(PreprocessConfig, OneYamlDocumentPerFile) {
  TempDir dir;
  const auto file = dir.file("p.yaml");
  expect_refused(file, "out: x\nvocab:\n  size: 8000\n---\nvocab:\n  size: 16000\n",
                 {"p.yaml:4:1: a second YAML document"});
  write_text(file, "---\nout: x\nvocab:\n  size: 8000\n");
  EXPECT_EQ(load_preprocess_config(file).vocab.vocab_size, 8000);
}

}  // namespace
}  // namespace nmt::preprocess
