#pragma once
// sacreBLEU 2.x's command line (sacrebleu.py) over nmt_eval, what nmt-bleu runs: BLEU, chrF/chrF++
// and TER with sacreBLEU's options, defaults, signatures and output, corpus or sentence level,
// bootstrap confidence intervals (-ci) and paired tests over several systems (-i BASELINE SYS...,
// --paired-bs or --paired-ar), so `nmt-bleu ref.txt -i hyp.txt -m bleu chrf ter` prints what
// `sacrebleu ...` prints, signature version field aside ("nmt-bleu-2.4.0"). Options parse as
// argparse parses them: single-dash words (-sl -tok -lc -cin ...) are options, never bundles of
// letters, and a long option may be shortened to any unique prefix. SACREBLEU_SEED (default 12345,
// "none": unseeded) and SACREBLEU_FORMAT are read as sacreBLEU reads them.
// Deliberate differences: every argument error is a UsageError (exit 2; sacreBLEU exits 1 for the
// checks of its own), no test sets (-t, -l's test-set uses, --echo, --download, --list, --citation
// are refused), no .gz input, UTF-8 only, no colour, --paired-jobs accepted but the tests run in
// one thread, and --json kept as nmt-bleu's shorthand for -f json.

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "common/cli.h"
#include "eval/metrics/bleu.h"
#include "eval/metrics/chrf.h"
#include "eval/metrics/significance.h"
#include "eval/metrics/ter.h"

namespace nmt::eval {

// Everything sacreBLEU's options set, with sacreBLEU's defaults.
struct SacreBleuArgs {
  std::vector<std::string> refs;                   // reference files, before -i
  std::optional<std::vector<std::string>> inputs;  // nullopt: stdin, systems split on tabs
  int num_refs = 1;                                // -nr: tab-separated references per line
  std::string encoding = "utf-8";                  // -e: accepted in its UTF-8 spellings only
  std::vector<std::string> metrics{"bleu"};        // -m: bleu, chrf, ter
  bool sentence_level = false;                     // -sl
  std::optional<std::string> tokenize;  // -tok (BLEU); default from -l's target language, else 13a
  std::string langpair;                 // -l SRC-TRG
  bool confidence = false;              // -ci
  int confidence_n = kDefaultBootstrapSamples;                 // -cin
  bool paired_ar = false, paired_bs = false;                   // -par, -pbs
  int paired_ar_n = kDefaultArTrials;                          // -parn
  int paired_bs_n = kDefaultBootstrapSamples;                  // -pbsn
  int paired_jobs = 1;                                         // -j: accepted, one thread
  bool short_sig = false, score_only = false, detail = false;  // -sh, -b, -d
  bool json = false;                                           // --json: -f json
  int width = 1;                                               // -w: decimal places
  std::string format = "json";                                 // -f: json, text, latex
  std::vector<std::string> unsupported;  // the test-set options given (refused)
  BleuOptions bleu;                      // -s, -sv, -lc, --force (tokenize: from -tok and -l)
  ChrfOptions chrf;                      // -cc, -cw, --chrf-*
  TerOptions ter;                        // --ter-*
};

// sacreBLEU's options on `app`, bound to `args`.
void add_sacrebleu_options(CLI::App& app, SacreBleuArgs& args);

// The command line `args` (args[0] the program) rewritten for CLI11 as argparse reads it: single-
// dash words to their long options, unique prefixes of `app`'s long options completed, only the
// last group of a repeated -i or -m kept. UsageError for an ambiguous prefix.
std::vector<std::string> argparse_rewrite(std::vector<std::string> args, const CLI::App& app);

// Checks the combination, reads the references and the systems (from `in` without -i), scores
// and prints to `out` as sacreBLEU does; returns the exit status. UsageError for argument errors,
// std::runtime_error for unreadable or mismatched inputs.
int run_sacrebleu(SacreBleuArgs args, std::istream& in, std::ostream& out);

}  // namespace nmt::eval
