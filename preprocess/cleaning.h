#pragma once
// Corpus cleaning as common WMT practice does it (Moses clean-corpus-n style length and ratio
// limits, plus encoding repairs). Every pair read is either kept or dropped for one counted reason;
// every repair is counted too, so nothing changes or disappears silently.
//
// Normalisation, on every split: invalid UTF-8 bytes become U+FFFD (counted "invalid_utf8"),
// control characters are removed and tabs become spaces ("control_chars"), Unicode spaces (such
// as U+00A0) become ASCII spaces and whitespace runs are collapsed and trimmed ("whitespace").
// Filters, on training splits (and on valid/test only when asked, since references must stay
// line-aligned with their sources): empty sides, characters per side, words per side, the
// longer/shorter word-count ratio, and optionally exact duplicate pairs.

#include <cstdint>
#include <map>
#include <string>
#include <unordered_set>

#include "preprocess/corpus_reader.h"

namespace nmt::preprocess {

struct CleaningOptions {
  bool filter_eval_splits = false;  // apply the filters below to valid/test too
  int min_words = 1;                // per side, whitespace-separated
  int max_words = 250;              // per side; the usual WMT/fairseq limit
  std::int64_t max_chars = 2000;    // code points per side
  double max_ratio = 3.0;           // longer side / shorter side, in words; <= 0 disables
  bool dedupe = false;              // drop exact duplicate pairs (memory: 8 bytes per kept pair)
  void validate() const;
};

struct CleaningStats {
  std::int64_t read = 0;
  std::int64_t kept = 0;
  std::map<std::string, std::int64_t> dropped;   // reason -> pairs dropped
  std::map<std::string, std::int64_t> repaired;  // reason -> pairs changed but kept
  std::int64_t dropped_total() const;
  void merge(const CleaningStats& other);
};

// The reasons, as they appear in stats and the manifest.
inline constexpr const char* kDropEmpty = "empty";
inline constexpr const char* kDropTooLongChars = "too_long_chars";
inline constexpr const char* kDropTooFewWords = "too_few_words";
inline constexpr const char* kDropTooManyWords = "too_many_words";
inline constexpr const char* kDropLengthRatio = "length_ratio";
inline constexpr const char* kDropDuplicate = "duplicate";
inline constexpr const char* kRepairInvalidUtf8 = "invalid_utf8";
inline constexpr const char* kRepairControlChars = "control_chars";
inline constexpr const char* kRepairWhitespace = "whitespace";

class PairCleaner {
 public:
  // `filter`: apply the filters (training splits); otherwise only normalise.
  PairCleaner(const CleaningOptions& options, bool filter);

  // Normalises `pair` in place; returns false, counting the reason, when it is dropped.
  bool apply(SentencePair& pair);
  const CleaningStats& stats() const { return stats_; }

 private:
  const char* filter_reason(const SentencePair& pair);

  CleaningOptions options_;
  bool filter_;
  CleaningStats stats_;
  std::unordered_set<std::uint64_t> seen_;
};

// The normalisation steps, exposed for tests. Each returns true when it changed the text.
bool repair_utf8(std::string& text);
bool remove_control_chars(std::string& text);
bool normalize_whitespace(std::string& text);
std::size_t unicode_space_length(const std::string& text, std::size_t i);
std::int64_t count_code_points(const std::string& text);
int count_words(const std::string& text);

}  // namespace nmt::preprocess
