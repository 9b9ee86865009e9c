#pragma once
// Error analysis of one or more systems' translations of a test set (what nmt-analyze reports):
// per-sentence chrF and BLEU (sacreBLEU's sentence scores, eval/analysis/analysis_scores.h), the
// worst sentences, corpus scores and length ratios by source-length bucket, the sentences flagged
// by the detectors of eval/analysis/analysis_errors.h (repetitions, omissions, untranslated
// copies), and for several systems the sentences where each pair differs most. Corpus figures are
// computed from summed sentence statistics, so a system's corpus BLEU and chrF equal nmt-bleu's on
// the same files. Sentences are scored in parallel; 100,000 lines take seconds.

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "eval/analysis/analysis_errors.h"
#include "eval/metrics/bleu.h"
#include "eval/metrics/chrf.h"

namespace nmt::eval::analysis {

struct AnalysisOptions {
  std::size_t worst = 20;        // worst sentences listed per system (by chrF, then BLEU)
  std::size_t differences = 20;  // sentences listed per pair of systems
  std::size_t examples = 10;     // flagged sentences the Markdown report shows per kind and system
  // Upper bounds (inclusive, ascending, in source words) of the source-length buckets; a last
  // bucket takes the longer sentences.
  std::vector<int> bucket_edges{5, 10, 15, 20, 30, 40};
  BleuOptions bleu;  // tokenizer and case as nmt-bleu's; smoothing stays 'exp'
  ChrfOptions chrf;  // chrF2 by default; word_order 2 gives chrF++
  DetectorOptions detectors;
  int threads = 0;  // scoring threads; 0: one per core (at most 16)

  // Throws std::invalid_argument naming the field at fault.
  void validate() const;
};

struct SystemInput {
  std::string name;                     // shown in the report; any text
  std::string file;                     // where the hypotheses came from, for the report
  std::vector<std::string> hypotheses;  // one per source line
};

struct AnalysisInput {
  std::string source_file, reference_file;  // for the report
  std::vector<std::string> sources;
  std::vector<std::string> references;  // one per source line, none empty
  std::vector<SystemInput> systems;     // at least one
};

struct SentenceResult {
  double bleu = 0.0;                           // sentence BLEU, 0..100
  double chrf = 0.0;                           // sentence chrF, 0..100
  std::size_t hyp_tokens = 0, ref_tokens = 0;  // tokens as BLEU's tokenizer splits them
  double source_fraction = 0.0;                // of hypothesis words found in the source
  std::optional<Repetition> repetition;
  bool omission = false;
  bool copy = false;
};

// Summed statistics of a set of sentences, and the corpus scores they give.
struct Totals {
  std::size_t sentences = 0;
  double bleu = 0.0, chrf = 0.0;
  double length_ratio = 0.0;  // hypothesis / reference tokens; 0 without reference tokens
  std::size_t hyp_tokens = 0, ref_tokens = 0;
};

struct Bucket {
  int min_words = 0;   // source words, inclusive
  int max_words = -1;  // inclusive; -1: no upper bound
  std::size_t sentences = 0;
  std::string label() const;  // "0-5", "41+"
};

struct SystemResult {
  std::string name, file;
  std::vector<SentenceResult> sentences;  // in input order
  Totals corpus;
  std::vector<Totals> buckets;                              // as Analysis::buckets
  std::vector<std::size_t> worst;                           // sentence indices, worst first
  std::vector<std::size_t> repetitions, omissions, copies;  // flagged sentence indices, in order
};

// The sentences where systems[a] and systems[b] differ most in chrF, largest difference first.
struct PairDifference {
  std::size_t a = 0, b = 0;
  std::vector<std::size_t> sentences;
};

struct Analysis {
  std::size_t sentences = 0;
  std::vector<int> source_words;  // per sentence (Python str.split())
  std::vector<Bucket> buckets;
  std::vector<SystemResult> systems;
  std::vector<PairDifference> differences;  // every pair a < b, in order
  std::string bleu_signature;               // corpus BLEU's (eff:no)
  std::string sentence_bleu_signature;      // sentence BLEU's (eff:yes)
  std::string chrf_signature, chrf_name;    // chrf_name: "chrF2"...
};

// Throws std::invalid_argument when the input is empty or its parts differ in length (naming the
// counts; tools check and name their files first) or a reference is empty, naming its line.
Analysis analyze(const AnalysisInput& input, const AnalysisOptions& options);

}  // namespace nmt::eval::analysis
