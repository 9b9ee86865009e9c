#include "preprocess/preprocess_config.h"

#include <stdexcept>

#include "common/config_fields.h"
#include "common/config_loader.h"

namespace nmt {

template <>
struct ConfigEnum<preprocess::CorpusFormat> {
  static std::string name(preprocess::CorpusFormat f) { return preprocess::format_name(f); }
  static preprocess::CorpusFormat parse(const std::string& s) {
    return preprocess::parse_corpus_format(s);
  }
};

namespace preprocess {

// Every key of nmt-preprocess's YAML, declared once: its meaning, the paper's value and, through
// the structs' initializers, its default. Loading, to_yaml and docs/config.md (nmt-config-doc)
// all walk these lists (common/config_fields.h).
template <typename V>
void fields(V& v, VocabularyOptions& o) {
  v("type", o.model_type, "SentencePiece model type: bpe or unigram.", Paper{"bpe"});
  v("size", o.vocab_size, "Pieces in the joint source-target vocabulary.", Paper{"~37000 (EN-DE)"});
  v("character_coverage", o.character_coverage,
    "Share of the training text's characters the vocabulary covers; 1.0 keeps every character "
    "(right for European languages).");
  v("sample_sentences", o.max_sentences,
    "Sentences (both sides) sampled from the cleaned train split to learn the vocabulary from.");
  v("max_sentence_length", o.max_sentence_length,
    "Bytes; longer sentences are left out of vocabulary training.");
  v("threads", o.threads,
    "SentencePiece trainer threads. Separate from the top-level threads: the model records them, "
    "so they change its bytes.");
  v("seed", o.seed, "Fixes the sampling, so that a vocabulary can be rebuilt.");
}

template <typename V>
void fields(V& v, CleaningOptions& c) {
  v("filter_eval_splits", c.filter_eval_splits, "Apply the filters to valid and test too.");
  v("min_words", c.min_words, "Fewest words per side (whitespace-separated).");
  v("max_words", c.max_words, "Most words per side (the usual WMT and fairseq limit).");
  v("max_chars", c.max_chars, "Most characters (code points) per side.");
  v("max_ratio", c.max_ratio,
    "Largest ratio of the longer side's words to the shorter side's; <= 0 disables the filter.");
  v("dedupe", c.dedupe, "Drop exact duplicate pairs (memory: 8 bytes per kept pair).");
}

template <typename V>
void fields(V& v, ShardOptions& s) {
  v("pairs_per_shard", s.pairs_per_shard, "Sentence pairs per HDF5 shard file.");
  v("compression", s.compression, "Deflate level 0-9; 0 writes contiguous data (fastest).");
}

template <typename V>
void fields(V& v, SamplingOptions& s) {
  v("copies", s.copies,
    "Times the train split is written, each pair segmented anew in every copy, so that each pass "
    "over the shards sees other segmentations; 0: the deterministic segmentation, once.",
    Paper{"0 (none)"});
  v("alpha", s.alpha, "bpe: the probability of skipping a merge; unigram: the smoothing.");
  v("seed", s.seed, "With the copy and the pair's index, fixes each sampled segmentation.");
}

namespace {

// A corpus as the YAML lists it; CorpusSpec, which the readers take, holds the columns apart.
struct CorpusEntry {
  std::string source;
  std::string target;
  CorpusFormat format = CorpusFormat::kAuto;
  std::vector<std::int64_t> columns{0, 1};
};

struct CorpusLists {
  std::vector<CorpusEntry> train, valid, test;
  std::vector<CorpusEntry>& of(const std::string& split) {
    return split == "train" ? train : split == "valid" ? valid : test;
  }
};

// The YAML document: the config's settings and its corpora.
struct Document {
  PreprocessConfig config;
  CorpusLists corpora;
  // The output directory and the thread count do not change the output: the manifest's copy
  // (to_yaml) leaves them out, so manifest.json stays byte-identical across both.
  bool with_run_settings = true;
};

template <typename V>
void fields(V& v, CorpusEntry& e) {
  v("source", e.source,
    "Required: the source side's file (plain or gzip), or the TSV file that holds both sides.");
  v("target", e.target, "The target side's file.", Empty{"none, for TSV"});
  v("format", e.format,
    "auto: from the file name, after a trailing .gz (.sgm or .sgml: SGML, .tsv: TSV, else text).");
  v("columns", e.columns, "TSV: the 0-based source and target columns of each row.");
}

template <typename V>
void fields(V& v, CorpusLists& c) {
  v.items("train", c.train,
          "The training corpora, read in order and concatenated; cleaned, and the vocabulary is "
          "learned from them.");
  v.items("valid", c.valid, "The validation corpora (cleaned with cleaning.filter_eval_splits).");
  v.items("test", c.test, "The test corpora (cleaned with cleaning.filter_eval_splits).");
}

template <typename V>
void fields(V& v, Document& d) {
  PreprocessConfig& c = d.config;
  if (d.with_run_settings) {
    v("out", c.out, "Output directory (--out); it must not exist unless overwrite is set.",
      Empty{"none, --out names it"});
    v("overwrite", c.overwrite,
      "Replace an existing output directory, atomically at the end, only if it holds a previous "
      "nmt-preprocess output (its manifest and the files it lists, nothing else).");
    v("threads", c.threads, "Encoding threads; the output is identical for any number.");
  }
  v("spm_model", c.spm_model,
    "Reuse this SentencePiece model instead of learning one from the train split.",
    Empty{"learn one"});
  v.section("corpora", d.corpora, "The corpora of each split.");
  v.section("vocab", c.vocab,
            "The joint subword vocabulary (paper section 5.1), learned with SentencePiece from "
            "both sides of the cleaned train split.");
  v.section("cleaning", c.cleaning,
            "Filters on sentence pairs, for the train split (and valid and test with "
            "filter_eval_splits).");
  v.section("shards", c.shards, "The HDF5 shards written.");
  v.section("sampling", c.sampling,
            "Subword regularization of the train split: BPE-dropout (Provilkov et al. 2020) for a "
            "bpe vocabulary, sampling (Kudo 2018) for a unigram one. Valid and test keep the one "
            "deterministic segmentation that translation uses.");
}

CorpusEntry entry_of(const CorpusSpec& spec) {
  CorpusEntry entry{spec.source, spec.target, spec.resolved_format(), {}};
  if (entry.format == CorpusFormat::kTsv) {
    entry.columns = {spec.tsv_source_column, spec.tsv_target_column};
  }
  return entry;
}

// Called by the FieldReader on each corpus as it is read.
void check_item(const CorpusEntry& entry, const ConfigSection& where) {
  if (entry.source.empty()) throw where.error("source", "every corpus needs a source file");
  if (entry.columns.size() != 2) {
    throw where.error("columns", "expected [source column, target column]");
  }
}

CorpusSpec spec_of(const CorpusEntry& entry) {
  return {entry.source, entry.target, entry.format, static_cast<int>(entry.columns[0]),
          static_cast<int>(entry.columns[1])};
}

}  // namespace

SplitCorpora& PreprocessConfig::split(const std::string& name) {
  for (auto& s : splits) {
    if (s.name == name) return s;
  }
  throw std::invalid_argument("unknown split '" + name + "' (expected train, valid or test)");
}

const SplitCorpora& PreprocessConfig::split(const std::string& name) const {
  return const_cast<PreprocessConfig*>(this)->split(name);
}

void PreprocessConfig::validate() const {
  if (out.empty()) throw std::invalid_argument("out: an output directory is required (--out)");
  if (threads < 1) throw std::invalid_argument("threads must be at least 1");
  bool any = false;
  for (const auto& s : splits) any = any || !s.corpora.empty();
  if (!any) throw std::invalid_argument("no corpora: give --train, --valid or --test");
  if (split("train").corpora.empty() && spm_model.empty()) {
    throw std::invalid_argument(
        "without a train split there is nothing to learn a vocabulary from: pass --spm-model");
  }
  if (shards.pairs_per_shard < 1)
    throw std::invalid_argument("shards.pairs_per_shard must be >= 1");
  if (shards.compression < 0 || shards.compression > 9) {
    throw std::invalid_argument("shards.compression must be a deflate level 0-9");
  }
  vocab.validate();
  sampling.validate();
  cleaning.validate();
}

PreprocessConfig load_preprocess_config(const std::string& path,
                                        const std::vector<std::string>& overrides) {
  YAML::Node root = path.empty() ? YAML::Node(YAML::NodeType::Map) : load_yaml_file(path);
  for (const auto& o : overrides) apply_override(root, o);
  const std::string source = path.empty() ? "--set" : path;
  Document document;
  read_fields(root, source, document);
  for (auto& split : document.config.splits) {
    for (const auto& entry : document.corpora.of(split.name)) {
      split.corpora.push_back(spec_of(entry));
    }
  }
  return document.config;
}

std::string to_yaml(const PreprocessConfig& config) {
  Document document{config, {}, /*with_run_settings=*/false};
  for (const auto& split : config.splits) {
    for (const auto& spec : split.corpora)
      document.corpora.of(split.name).push_back(entry_of(spec));
  }
  return write_fields(document) + "\n";
}

ConfigReference preprocess_config_reference() {
  return {"nmt-preprocess",
          "`nmt-preprocess --config FILE`, each key overridable with `--set key=value`; the "
          "command-line flags (--out, --train, --vocab-size, ...) beat both. "
          "configs/preprocess/ holds the paper's WMT14 EN-DE setup and Multi30k's. The manifest "
          "of the output keeps the resolved config, without out, overwrite and threads.",
          document_fields(Document{})};
}

}  // namespace preprocess
}  // namespace nmt
