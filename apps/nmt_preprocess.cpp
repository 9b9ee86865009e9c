// nmt-preprocess: WMT-style parallel corpora -> cleaned, joint-vocabulary-encoded HDF5 shards.
//
// Exit codes: 0 done; 1 an error (logged; the temporary output OUT.tmp-PID is removed, a previous
// output replaced by --overwrite stays); 128 + signal when stopped by a signal: 130 for SIGINT,
// 143 for SIGTERM (also 138 SIGUSR1, 140 SIGUSR2). The first signal is honoured within a pair
// (cleaning), a block (encoding) or 100 ms (vocabulary training): the temporary output is removed
// and one line logged. Unlike nmt-train's 75 there is nothing to resume, so SIGTERM gets the
// shell's own code. A second signal exits at once (same codes) and may leave OUT.tmp-PID, which
// the next run removes.

#include <csignal>
#include <cstdlib>
#include <iostream>

#include "apps/tool_main.h"
#include "common/cli.h"
#include "common/progress.h"
#include "common/stop_signals.h"
#include "preprocess/corpus_reader.h"
#include "preprocess/pipeline.h"
#include "preprocess/shard_format.h"

namespace {

using nmt::preprocess::CorpusSpec;
using nmt::preprocess::PreprocessConfig;

struct CommandLine {
  std::string config_file;
  std::vector<std::string> overrides;
  std::map<std::string, std::vector<std::vector<std::string>>> corpora;  // split -> [src, tgt?]
  std::string format = "auto";
  std::vector<int> tsv_columns;
};

void add_corpus_flags(CLI::App& app, CommandLine& cl) {
  for (const char* split : {"train", "valid", "test"}) {
    app.add_option(std::string("--") + split, cl.corpora[split],
                   std::string("A ") + split +
                       " corpus: SRC TGT (text, .gz or .sgm pair) or one FILE.tsv; repeatable")
        ->expected(1, 2)
        ->type_name("SRC [TGT]");
  }
  app.add_option("--format", cl.format,
                 "Corpus format of the files given here: auto, text, sgml, tsv")
      ->capture_default_str()
      ->check(nmt::parsed_by(nmt::preprocess::parse_corpus_format));
  app.add_option("--tsv-columns", cl.tsv_columns, "Source and target columns of TSV rows (0-based)")
      ->expected(2)
      ->delimiter(',');
}

void add_corpora(const CommandLine& cl, PreprocessConfig& config) {
  for (const auto& [split, list] : cl.corpora) {
    for (const auto& files : list) {
      CorpusSpec spec;
      spec.source = files.at(0);
      spec.target = files.size() > 1 ? files[1] : "";
      spec.format = nmt::preprocess::parse_corpus_format(cl.format);
      if (!cl.tsv_columns.empty()) {
        spec.tsv_source_column = cl.tsv_columns[0];
        spec.tsv_target_column = cl.tsv_columns[1];
      }
      config.split(split).corpora.push_back(spec);
    }
  }
}

const char* signal_name(int signo) {
  switch (signo) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGUSR2:
      return "SIGUSR2";
    default:
      return "a signal";
  }
}

// Runs the pipeline under the stop signals. On a stop the temporary output is gone by the time
// PreprocessStopped arrives here; the process ends with std::_Exit because a vocabulary training
// may still run on its abandoned thread, which static destructors must not race.
nmt::preprocess::PreprocessResult run_stoppably(const PreprocessConfig& config) {
  const nmt::StopSignals signals(
      "second stop signal: exiting now; the temporary output OUT.tmp-PID may be left (the next "
      "run removes it)\n");
  try {
    return nmt::preprocess::run_preprocess(
        config, [] { return nmt::StopSignals::requested() != nmt::StopReason::kNone; });
  } catch (const nmt::preprocess::PreprocessStopped&) {
    const int signo = nmt::StopSignals::signal_number();
    spdlog::warn("stopped by {}: temporary output removed, {} {}", signal_name(signo), config.out,
                 config.overwrite ? "left as it was" : "not written");
    spdlog::default_logger()->flush();
    std::cout.flush();
    std::_Exit(128 + signo);
  }
}

void print_summary(const nmt::preprocess::PreprocessResult& r, const std::string& out) {
  using nmt::with_thousands;
  const auto& m = r.manifest;
  std::cout << fmt::format("\n{:<8}{:>12}{:>12}{:>10}{:>14}{:>14}{:>8}\n", "split", "read", "kept",
                           "dropped", "src tokens", "tgt tokens", "shards");
  for (const auto& s : m.splits) {
    std::int64_t src = 0, tgt = 0;
    for (const auto& shard : s.shards) src += shard.src_tokens, tgt += shard.tgt_tokens;
    std::cout << fmt::format("{:<8}{:>12}{:>12}{:>10}{:>14}{:>14}{:>8}\n", s.name,
                             with_thousands(s.cleaning.read), with_thousands(s.cleaning.kept),
                             with_thousands(s.cleaning.dropped_total()), with_thousands(src),
                             with_thousands(tgt), s.shards.size());
  }
  std::cout << fmt::format("vocabulary: {} pieces ({}), sha256 {}\n", m.vocab_size, m.vocab_type,
                           m.vocab_sha256);
  std::cout << fmt::format("time: clean {:.1f} s, vocabulary {:.1f} s, encode+write {:.1f} s\n",
                           r.seconds_clean, r.seconds_vocab, r.seconds_encode);
  std::cout << "output: " << out << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Clean parallel corpora, learn a joint SentencePiece vocabulary and write "
      "tokenized HDF5 shards with a manifest.",
      "nmt-preprocess"};
  CommandLine cl;
  PreprocessConfig flags;  // holds the values of flags given on the command line
  app.add_option("--config", cl.config_file, "YAML config (every key: docs/config.md)");
  app.add_option("--set", cl.overrides, "Override a config key, e.g. --set vocab.size=8000");
  auto* out = app.add_option("--out", flags.out, "Output directory (must not exist)");
  auto* overwrite = app.add_flag(
      "--overwrite", flags.overwrite,
      "Replace an existing output directory, only if it holds a previous preprocessing output "
      "(its manifest and the files it lists, nothing else)");
  auto* vocab_size =
      app.add_option("--vocab-size", flags.vocab.vocab_size, "Joint vocabulary size");
  auto* vocab_type = app.add_option("--vocab-type", flags.vocab.model_type, "bpe or unigram");
  auto* spm = app.add_option("--spm-model", flags.spm_model, "Reuse this SentencePiece model");
  auto* threads = app.add_option("--threads", flags.threads, "Encoding and vocabulary threads");
  auto* shard_size =
      app.add_option("--shard-size", flags.shards.pairs_per_shard, "Pairs per shard");
  std::string verify_dir;
  app.add_option("--verify", verify_dir,
                 "Hash every shard of an existing output DIR against its manifest.json and exit "
                 "(after copying shards; training checks only their sizes)")
      ->type_name("DIR");
  add_corpus_flags(app, cl);
  return nmt::apps::run_main(app, argc, argv, [&] {
    if (!verify_dir.empty()) {
      nmt::preprocess::verify_checksums(verify_dir);
      std::cout << verify_dir << ": every shard matches manifest.json\n";
      return 0;
    }
    auto config = nmt::preprocess::load_preprocess_config(cl.config_file, cl.overrides);
    // Command-line flags win over the config file.
    if (*out) config.out = flags.out;
    if (*overwrite) config.overwrite = flags.overwrite;
    if (*vocab_size) config.vocab.vocab_size = flags.vocab.vocab_size;
    if (*vocab_type) config.vocab.model_type = flags.vocab.model_type;
    if (*spm) config.spm_model = flags.spm_model;
    if (*threads) config.threads = flags.threads;
    if (*shard_size) config.shards.pairs_per_shard = flags.shards.pairs_per_shard;
    add_corpora(cl, config);
    const auto result = run_stoppably(config);
    print_summary(result, config.out);
    return 0;
  });
}
