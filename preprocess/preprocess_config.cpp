#include "preprocess/preprocess_config.h"

#include <stdexcept>

#include "common/config_loader.h"

namespace nmt::preprocess {
namespace {

CorpusSpec load_corpus(const ConfigSection& s) {
  CorpusSpec spec;
  std::string format = "auto";
  std::vector<std::int64_t> columns;
  s.read("source", spec.source);
  s.read("target", spec.target);
  s.read("format", format);
  s.read("columns", columns);
  s.finish();
  if (spec.source.empty()) throw s.error("source", "every corpus needs a source file");
  try {
    spec.format = parse_corpus_format(format);
  } catch (const std::invalid_argument& e) {
    throw s.error("format", e.what());
  }
  if (!columns.empty()) {
    if (columns.size() != 2) throw s.error("columns", "expected [source column, target column]");
    spec.tsv_source_column = static_cast<int>(columns[0]);
    spec.tsv_target_column = static_cast<int>(columns[1]);
  }
  return spec;
}

void load_vocab(const ConfigSection& s, VocabularyOptions& v) {
  s.read("type", v.model_type);
  s.read("size", v.vocab_size);
  s.read("character_coverage", v.character_coverage);
  s.read("sample_sentences", v.max_sentences);
  s.read("max_sentence_length", v.max_sentence_length);
  s.read("threads", v.threads);
  int seed = static_cast<int>(v.seed);
  s.read("seed", seed);
  v.seed = static_cast<std::uint32_t>(seed);
  s.finish();
}

void load_cleaning(const ConfigSection& s, CleaningOptions& c) {
  s.read("filter_eval_splits", c.filter_eval_splits);
  s.read("min_words", c.min_words);
  s.read("max_words", c.max_words);
  s.read("max_chars", c.max_chars);
  s.read("max_ratio", c.max_ratio);
  s.read("dedupe", c.dedupe);
  s.finish();
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
  PreprocessConfig config;
  ConfigSection top(root, path.empty() ? "--set" : path);
  top.read("out", config.out);
  top.read("overwrite", config.overwrite);
  top.read("spm_model", config.spm_model);
  top.read("threads", config.threads);
  load_vocab(top.section("vocab"), config.vocab);
  load_cleaning(top.section("cleaning"), config.cleaning);
  const auto shards = top.section("shards");
  shards.read("pairs_per_shard", config.shards.pairs_per_shard);
  shards.read("compression", config.shards.compression);
  shards.finish();
  const auto sampling = top.section("sampling");
  sampling.read("copies", config.sampling.copies);
  sampling.read("alpha", config.sampling.alpha);
  sampling.read("seed", config.sampling.seed);
  sampling.finish();
  const auto corpora = top.section("corpora");
  for (auto& split : config.splits) {
    for (const auto& item : corpora.section_list(split.name)) {
      split.corpora.push_back(load_corpus(item));
    }
  }
  corpora.finish();
  top.finish();
  return config;
}

std::string to_yaml(const PreprocessConfig& config) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  // Neither the output directory nor the encoding threads change the output: leaving them out
  // keeps manifest.json byte-identical across thread counts and locations.
  out << YAML::Key << "spm_model" << YAML::Value << config.spm_model;
  out << YAML::Key << "corpora" << YAML::Value << YAML::BeginMap;
  for (const auto& split : config.splits) {
    out << YAML::Key << split.name << YAML::Value << YAML::BeginSeq;
    for (const auto& c : split.corpora) {
      out << YAML::Flow << YAML::BeginMap << YAML::Key << "source" << YAML::Value << c.source;
      if (!c.target.empty()) out << YAML::Key << "target" << YAML::Value << c.target;
      out << YAML::Key << "format" << YAML::Value << format_name(c.resolved_format());
      if (c.resolved_format() == CorpusFormat::kTsv) {
        out << YAML::Key << "columns" << YAML::Value << YAML::Flow << YAML::BeginSeq
            << c.tsv_source_column << c.tsv_target_column << YAML::EndSeq;
      }
      out << YAML::EndMap;
    }
    out << YAML::EndSeq;
  }
  out << YAML::EndMap;
  const auto& v = config.vocab;
  out << YAML::Key << "vocab" << YAML::Value << YAML::BeginMap << YAML::Key << "type" << YAML::Value
      << v.model_type << YAML::Key << "size" << YAML::Value << v.vocab_size << YAML::Key
      << "character_coverage" << YAML::Value << v.character_coverage << YAML::Key
      << "sample_sentences" << YAML::Value << v.max_sentences << YAML::Key << "max_sentence_length"
      << YAML::Value << v.max_sentence_length << YAML::Key << "threads" << YAML::Value << v.threads
      << YAML::Key << "seed" << YAML::Value << v.seed << YAML::EndMap;
  const auto& c = config.cleaning;
  out << YAML::Key << "cleaning" << YAML::Value << YAML::BeginMap << YAML::Key
      << "filter_eval_splits" << YAML::Value << c.filter_eval_splits << YAML::Key << "min_words"
      << YAML::Value << c.min_words << YAML::Key << "max_words" << YAML::Value << c.max_words
      << YAML::Key << "max_chars" << YAML::Value << c.max_chars << YAML::Key << "max_ratio"
      << YAML::Value << c.max_ratio << YAML::Key << "dedupe" << YAML::Value << c.dedupe
      << YAML::EndMap;
  out << YAML::Key << "shards" << YAML::Value << YAML::BeginMap << YAML::Key << "pairs_per_shard"
      << YAML::Value << config.shards.pairs_per_shard << YAML::Key << "compression" << YAML::Value
      << config.shards.compression << YAML::EndMap;
  const auto& sm = config.sampling;
  out << YAML::Key << "sampling" << YAML::Value << YAML::BeginMap << YAML::Key << "copies"
      << YAML::Value << sm.copies << YAML::Key << "alpha" << YAML::Value << sm.alpha << YAML::Key
      << "seed" << YAML::Value << sm.seed << YAML::EndMap;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

}  // namespace nmt::preprocess
