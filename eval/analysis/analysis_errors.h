#pragma once
// Detectors of the translation errors that decoding choices cause or hide, run per sentence on
// BLEU's 13a tokens:
//   repetition  an n-gram repeated back to back ("the the", "in a red in a red"), or a 4-gram
//               occurring twice anywhere: what no-repeat-n-gram and repetition penalties are for
//   omission    a hypothesis far shorter than both its reference and its source: content dropped
//               (often a too-strong length penalty or an early end of sentence)
//   copy        a hypothesis made mostly of source words although its reference is not: the
//               source left untranslated
// Each is a heuristic that flags sentences to read, not a verdict; where the reference shows the
// same pattern (a name copied, a word legitimately doubled), nothing is flagged.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nmt::eval::analysis {

struct DetectorOptions {
  int repeat_order = 4;         // an n-gram of this order occurring twice is a repetition
  int max_tandem_order = 4;     // back-to-back repeats are looked for up to this order
  double omission_ratio = 0.5;  // hypothesis tokens below this fraction of reference and source
  int omission_min_tokens = 5;  // ... and a reference of at least this many tokens
  double copy_fraction = 0.8;   // this fraction of hypothesis words found in the source
  int copy_min_words = 3;       // ... and a hypothesis of at least this many words

  // Throws std::invalid_argument naming the field when a value is out of range.
  void validate() const;
};

// A segment's 13a tokens (BLEU's view of it).
std::vector<std::string> tokens_13a(std::string_view segment);

struct Repetition {
  std::string ngram;         // the repeated tokens, joined by spaces
  int order = 0;             // tokens in `ngram`
  int count = 0;             // occurrences (back to back when `consecutive`)
  bool consecutive = false;  // a tandem repeat rather than a recurring 4-gram
  int position = 0;          // 0-based token index of the first occurrence
};

// The first back-to-back repeat (earliest position, then shortest order) whose unit holds a word,
// else the first repeat_order-gram occurring more often than in the reference and at least twice;
// nullopt when neither. A tandem that the reference holds too is not one.
std::optional<Repetition> find_repetition(const std::vector<std::string>& hypothesis,
                                          const std::vector<std::string>& reference,
                                          const DetectorOptions& options);

// Token counts: hypothesis shorter than omission_ratio times the reference and the source.
bool is_omission(std::size_t hypothesis_tokens, std::size_t reference_tokens,
                 std::size_t source_tokens, const DetectorOptions& options);

// The fraction (0..1) of `text`'s words (tokens with a letter or digit, compared ASCII-lowercased)
// also in `source`, each source word matching once; 0 for a text without words.
double source_word_fraction(const std::vector<std::string>& text,
                            const std::vector<std::string>& source);

// Words in `tokens` (tokens with a letter, a digit or any non-ASCII character).
std::size_t count_words(const std::vector<std::string>& tokens);

// The hypothesis is a copy: copy_fraction of its words (at least copy_min_words) come from the
// source while less than that of the reference's do. `hypothesis_fraction` and
// `reference_fraction` are source_word_fraction's results.
bool is_copy(double hypothesis_fraction, std::size_t hypothesis_words, double reference_fraction,
             const DetectorOptions& options);

}  // namespace nmt::eval::analysis
