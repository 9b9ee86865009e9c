// Repetition, omission and copy detectors; see eval/analysis/analysis_errors.h for what each flags.

#include "eval/analysis/analysis_errors.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <stdexcept>

#include "eval/metrics/python_str.h"
#include "eval/metrics/tokenizer_13a.h"

namespace nmt::eval::analysis {
namespace {

bool is_word(const std::string& token) {
  for (const unsigned char c : token) {
    if (c >= 0x80 || std::isalnum(c)) return true;
  }
  return false;
}

using Tokens = std::vector<std::string>;

bool same_span(const Tokens& a, std::size_t i, const Tokens& b, std::size_t j, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) {
    if (a[i + k] != b[j + k]) return false;
  }
  return true;
}

std::string join(const Tokens& tokens, std::size_t begin, std::size_t n) {
  std::string out;
  for (std::size_t k = 0; k < n; ++k) {
    if (k > 0) out.push_back(' ');
    out += tokens[begin + k];
  }
  return out;
}

bool any_word(const Tokens& tokens, std::size_t begin, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) {
    if (is_word(tokens[begin + k])) return true;
  }
  return false;
}

// Whether `text` holds tokens[begin, begin + n) twice back to back.
bool holds_tandem(const Tokens& text, const Tokens& tokens, std::size_t begin, std::size_t n) {
  for (std::size_t j = 0; j + 2 * n <= text.size(); ++j) {
    if (same_span(text, j, tokens, begin, n) && same_span(text, j + n, tokens, begin, n)) {
      return true;
    }
  }
  return false;
}

std::optional<Repetition> find_tandem(const Tokens& hyp, const Tokens& ref, std::size_t max_order) {
  for (std::size_t i = 0; i < hyp.size(); ++i) {
    for (std::size_t n = 1; n <= max_order && i + 2 * n <= hyp.size(); ++n) {
      if (!same_span(hyp, i, hyp, i + n, n) || !any_word(hyp, i, n)) continue;
      if (holds_tandem(ref, hyp, i, n)) continue;
      int count = 2;
      while (i + (count + 1) * n <= hyp.size() && same_span(hyp, i, hyp, i + count * n, n)) ++count;
      return Repetition{join(hyp, i, n), static_cast<int>(n), count, true, static_cast<int>(i)};
    }
  }
  return std::nullopt;
}

// How often tokens[begin, begin + n) occurs in `text`.
int occurrences(const Tokens& text, const Tokens& tokens, std::size_t begin, std::size_t n) {
  int count = 0;
  for (std::size_t j = 0; j + n <= text.size(); ++j) count += same_span(text, j, tokens, begin, n);
  return count;
}

// N-grams are found by hash, without a string per n-gram: (hash, position) pairs sorted, so
// equal n-grams are neighbours, earliest first. A 64-bit collision could at worst hide a repeat.
std::optional<Repetition> find_recurring(const Tokens& hyp, const Tokens& ref, std::size_t n) {
  if (hyp.size() < n + 1) return std::nullopt;  // two occurrences need room
  std::vector<std::size_t> token_hash(hyp.size());
  for (std::size_t i = 0; i < hyp.size(); ++i) token_hash[i] = std::hash<std::string>{}(hyp[i]);
  std::vector<std::pair<std::size_t, std::size_t>> keyed;  // (n-gram hash, position)
  for (std::size_t i = 0; i + n <= hyp.size(); ++i) {
    std::size_t h = n;
    for (std::size_t k = 0; k < n; ++k) h = h * 1000003u ^ token_hash[i + k];
    keyed.emplace_back(h, i);
  }
  std::sort(keyed.begin(), keyed.end());
  std::optional<Repetition> first;
  for (std::size_t g = 0; g < keyed.size();) {
    std::size_t end = g + 1;
    while (end < keyed.size() && keyed[end].first == keyed[g].first) ++end;
    const std::size_t at = keyed[g].second;
    if (end - g >= 2 && (!first || at < static_cast<std::size_t>(first->position)) &&
        any_word(hyp, at, n)) {
      int count = 0;
      for (std::size_t m = g; m < end; ++m) count += same_span(hyp, keyed[m].second, hyp, at, n);
      if (count >= 2 && count > occurrences(ref, hyp, at, n)) {
        first =
            Repetition{join(hyp, at, n), static_cast<int>(n), count, false, static_cast<int>(at)};
      }
    }
    g = end;
  }
  return first;
}

// The words among `tokens`, ASCII-lowercased and sorted.
std::vector<std::string> lowered_words(const std::vector<std::string>& tokens) {
  std::vector<std::string> words;
  for (const auto& token : tokens) {
    if (!is_word(token)) continue;
    auto& word = words.emplace_back(token);
    for (auto& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  std::sort(words.begin(), words.end());
  return words;
}

}  // namespace

void DetectorOptions::validate() const {
  auto check = [](bool ok, const char* field, const char* expected) {
    if (!ok) throw std::invalid_argument(std::string(field) + " must be " + expected);
  };
  check(repeat_order >= 1 && repeat_order <= 16, "repeat_order", "in 1..16");
  check(max_tandem_order >= 1 && max_tandem_order <= 16, "max_tandem_order", "in 1..16");
  check(omission_ratio > 0 && omission_ratio <= 1, "omission_ratio", "in (0, 1]");
  check(omission_min_tokens >= 1, "omission_min_tokens", "at least 1");
  check(copy_fraction > 0 && copy_fraction <= 1, "copy_fraction", "in (0, 1]");
  check(copy_min_words >= 1, "copy_min_words", "at least 1");
}

std::vector<std::string> tokens_13a(std::string_view segment) {
  const auto tokenized = tokenize_13a(segment);
  const auto views = split_python_whitespace(tokenized);
  return {views.begin(), views.end()};
}

std::optional<Repetition> find_repetition(const std::vector<std::string>& hypothesis,
                                          const std::vector<std::string>& reference,
                                          const DetectorOptions& options) {
  if (auto tandem =
          find_tandem(hypothesis, reference, static_cast<std::size_t>(options.max_tandem_order))) {
    return tandem;
  }
  return find_recurring(hypothesis, reference, static_cast<std::size_t>(options.repeat_order));
}

bool is_omission(std::size_t hypothesis_tokens, std::size_t reference_tokens,
                 std::size_t source_tokens, const DetectorOptions& options) {
  if (reference_tokens < static_cast<std::size_t>(options.omission_min_tokens)) return false;
  const auto hyp = static_cast<double>(hypothesis_tokens);
  return hyp < options.omission_ratio * static_cast<double>(reference_tokens) &&
         hyp < options.omission_ratio * static_cast<double>(source_tokens);
}

double source_word_fraction(const std::vector<std::string>& text,
                            const std::vector<std::string>& source) {
  const auto text_words = lowered_words(text);
  if (text_words.empty()) return 0.0;
  const auto source_words = lowered_words(source);
  // The size of the multiset intersection: each source word matches once.
  std::size_t found = 0;
  for (std::size_t i = 0, j = 0; i < text_words.size() && j < source_words.size();) {
    const int order = text_words[i].compare(source_words[j]);
    if (order == 0) {
      ++found;
      ++i;
      ++j;
    } else if (order < 0) {
      ++i;
    } else {
      ++j;
    }
  }
  return static_cast<double>(found) / static_cast<double>(text_words.size());
}

std::size_t count_words(const std::vector<std::string>& tokens) {
  std::size_t words = 0;
  for (const auto& token : tokens) words += is_word(token) ? 1 : 0;
  return words;
}

bool is_copy(double hypothesis_fraction, std::size_t hypothesis_words, double reference_fraction,
             const DetectorOptions& options) {
  return hypothesis_words >= static_cast<std::size_t>(options.copy_min_words) &&
         hypothesis_fraction >= options.copy_fraction && reference_fraction < options.copy_fraction;
}

}  // namespace nmt::eval::analysis
