#include "preprocess/cleaning.h"

#include "common/utf8.h"

#include <algorithm>
#include <stdexcept>
#include <string_view>

namespace nmt::preprocess {
namespace {

constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD

std::uint64_t fnv1a(std::string_view a, std::string_view b) {
  std::uint64_t hash = 1469598103934665603ull;
  const auto mix = [&hash](std::string_view s) {
    for (unsigned char c : s) hash = (hash ^ c) * 1099511628211ull;
  };
  mix(a);
  mix(std::string_view("\t", 1));
  mix(b);
  return hash;
}

}  // namespace

void CleaningOptions::validate() const {
  if (min_words < 0) throw std::invalid_argument("cleaning.min_words must be >= 0");
  if (max_words < std::max(min_words, 1)) {
    throw std::invalid_argument("cleaning.max_words must be >= max(min_words, 1)");
  }
  if (max_chars < 1) throw std::invalid_argument("cleaning.max_chars must be positive");
  if (max_ratio > 0 && max_ratio < 1) {
    throw std::invalid_argument("cleaning.max_ratio must be >= 1 (or <= 0 to disable)");
  }
}

std::int64_t CleaningStats::dropped_total() const {
  std::int64_t total = 0;
  for (const auto& [reason, count] : dropped) total += count;
  return total;
}

void CleaningStats::merge(const CleaningStats& other) {
  read += other.read;
  kept += other.kept;
  for (const auto& [reason, count] : other.dropped) dropped[reason] += count;
  for (const auto& [reason, count] : other.repaired) repaired[reason] += count;
}

bool repair_utf8(std::string& text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) break;
    i += length;
  }
  if (i == text.size()) return false;  // the common case: valid, no copy
  std::string repaired = text.substr(0, i);
  while (i < text.size()) {
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      repaired += kReplacement;
      ++i;
    } else {
      repaired.append(text, i, length);
      i += length;
    }
  }
  text = std::move(repaired);
  return true;
}

bool remove_control_chars(std::string& text) {
  // Expects valid UTF-8. Removes C0 controls (tab becomes a space), DEL, C1 controls (U+0080 to
  // U+009F, encoded C2 80..C2 9F) and the byte-order mark U+FEFF.
  std::string out;
  bool changed = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    const bool bom = c == 0xEF && next == 0xBB && i + 2 < text.size() &&
                     static_cast<unsigned char>(text[i + 2]) == 0xBF;
    if (c == '\t') {
      out += ' ';
      changed = true;
    } else if (c < 0x20 || c == 0x7F) {
      changed = true;
    } else if (c == 0xC2 && next >= 0x80 && next <= 0x9F) {
      changed = true;
      ++i;
    } else if (bom) {
      changed = true;
      i += 2;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (changed) text = std::move(out);
  return changed;
}

// Byte length of a Unicode space separator at text[i] (U+00A0, U+1680, U+2000-U+200A, U+202F,
// U+205F, U+3000), or 0. SentencePiece's NFKC would turn most of them into plain spaces anyway;
// doing it here keeps decode(encode(x)) == x for cleaned text.
std::size_t unicode_space_length(const std::string& text, std::size_t i) {
  const auto at = [&](std::size_t k) {
    return k < text.size() ? static_cast<unsigned char>(text[k]) : 0u;
  };
  const unsigned a = at(i), b = at(i + 1), c = at(i + 2);
  if (a == 0xC2 && b == 0xA0) return 2;
  if (a == 0xE1 && b == 0x9A && c == 0x80) return 3;
  if (a == 0xE2 && b == 0x80 && ((c >= 0x80 && c <= 0x8A) || c == 0xAF)) return 3;
  if (a == 0xE2 && b == 0x81 && c == 0x9F) return 3;
  if (a == 0xE3 && b == 0x80 && c == 0x80) return 3;
  return 0;
}

bool normalize_whitespace(std::string& text) {
  std::string out;
  out.reserve(text.size());
  bool changed = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const std::size_t wide = unicode_space_length(text, i);
    if (text[i] == ' ' || wide > 0) {
      if (wide > 0) i += wide - 1;
      if (!out.empty() && out.back() != ' ') out += ' ';
      changed = changed || wide > 0;
    } else {
      out += text[i];
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  if (!changed && out.size() == text.size()) return false;
  text = std::move(out);
  return true;
}

std::int64_t count_code_points(const std::string& text) {
  return std::count_if(text.begin(), text.end(),
                       [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

int count_words(const std::string& text) {
  // Called after normalize_whitespace: words are separated by single spaces.
  if (text.empty()) return 0;
  return 1 + static_cast<int>(std::count(text.begin(), text.end(), ' '));
}

PairCleaner::PairCleaner(const CleaningOptions& options, bool filter)
    : options_(options), filter_(filter) {
  options_.validate();
}

bool PairCleaner::apply(SentencePair& pair) {
  ++stats_.read;
  const auto repair = [&](bool (*step)(std::string&), const char* reason) {
    const bool a = step(pair.source);
    const bool b = step(pair.target);
    if (a || b) ++stats_.repaired[reason];
  };
  repair(repair_utf8, kRepairInvalidUtf8);
  repair(remove_control_chars, kRepairControlChars);
  repair(normalize_whitespace, kRepairWhitespace);
  if (filter_) {
    if (const char* reason = filter_reason(pair)) {
      ++stats_.dropped[reason];
      return false;
    }
  }
  ++stats_.kept;
  return true;
}

const char* PairCleaner::filter_reason(const SentencePair& pair) {
  if (pair.source.empty() || pair.target.empty()) return kDropEmpty;
  if (count_code_points(pair.source) > options_.max_chars ||
      count_code_points(pair.target) > options_.max_chars) {
    return kDropTooLongChars;
  }
  const int src_words = count_words(pair.source);
  const int tgt_words = count_words(pair.target);
  if (std::min(src_words, tgt_words) < options_.min_words) return kDropTooFewWords;
  if (std::max(src_words, tgt_words) > options_.max_words) return kDropTooManyWords;
  if (options_.max_ratio > 0) {
    const double longer = std::max(src_words, tgt_words);
    const double shorter = std::max(1, std::min(src_words, tgt_words));
    if (longer / shorter > options_.max_ratio) return kDropLengthRatio;
  }
  if (options_.dedupe && !seen_.insert(fnv1a(pair.source, pair.target)).second) {
    return kDropDuplicate;
  }
  return nullptr;
}

}  // namespace nmt::preprocess
