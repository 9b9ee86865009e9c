// Mirrors sacreBLEU 2.x's 13a and none tokenizers (see tokenizer_13a.h). The 13a regexes are
// replayed by hand-written scanners rather than std::regex (orders of magnitude slower); they run
// on bytes, which is exact because every character the regexes name is ASCII and never occurs
// inside a multi-byte UTF-8 sequence.

#include "eval/metrics/tokenizer_13a.h"

#include <stdexcept>

#include "eval/metrics/python_str.h"
#include "eval/metrics/tokenizer_char_zh.h"
#include "eval/metrics/tokenizer_intl.h"

namespace nmt::eval {
namespace {

std::string replace_all(std::string_view text, std::string_view from, std::string_view to) {
  std::string out;
  out.reserve(text.size());
  std::size_t start = 0;
  for (std::size_t pos; (pos = text.find(from, start)) != std::string_view::npos;) {
    out.append(text, start, pos - start).append(to);
    start = pos + from.size();
  }
  return out.append(text, start, std::string_view::npos);
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_period_or_comma(char c) {
  return c == '.' || c == ',';
}

// The first TokenizerRegexp class: [{-~[-` -&(-+:-@/], ASCII only.
bool is_13a_symbol(char c) {
  return (c >= '{' && c <= '~') || (c >= '[' && c <= '`') || (c >= ' ' && c <= '&') ||
         (c >= '(' && c <= '+') || (c >= ':' && c <= '@') || c == '/';
}

std::string pad_symbols(std::string_view text) {
  std::string out;
  out.reserve(text.size() * 2);
  for (const char c : text) {
    if (is_13a_symbol(c)) {
      out.push_back(' ');
      out.push_back(c);
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// One left-to-right, non-overlapping pass of a two-character pattern, as re.sub makes it:
// where match(a, b) holds, `a b` becomes `a` + spaces + `b` per the pattern's replacement.
template <typename Match>
std::string pair_pass(std::string_view text, Match match, const char* before_a, const char* between,
                      const char* after_b) {
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  std::size_t i = 0;
  while (i < text.size()) {
    if (i + 1 < text.size() && match(text[i], text[i + 1])) {
      out.append(before_a).append(1, text[i]).append(between).append(1, text[i + 1]);
      out.append(after_b);
      i += 2;
    } else {
      out.push_back(text[i++]);
    }
  }
  return out;
}

std::string join_python_words(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const auto word : split_python_whitespace(text)) {
    if (!out.empty()) out.push_back(' ');
    out.append(word);
  }
  return out;
}

}  // namespace

std::string tokenize_13a(std::string_view line) {
  std::string text = replace_all(line, "<skipped>", "");
  text = replace_all(text, "-\n", "");
  text = replace_all(text, "\n", " ");
  if (text.find('&') != std::string::npos) {
    text = replace_all(text, "&quot;", "\"");
    text = replace_all(text, "&amp;", "&");
    text = replace_all(text, "&lt;", "<");
    text = replace_all(text, "&gt;", ">");
  }
  return tokenize_regexp(" " + text + " ");
}

std::string tokenize_regexp(std::string_view line) {
  std::string text = pad_symbols(line);
  // ([^0-9])([\.,]) -> "\1 \2 "
  text = pair_pass(
      text, [](char a, char b) { return !is_digit(a) && is_period_or_comma(b); }, "", " ", " ");
  // ([\.,])([^0-9]) -> " \1 \2"
  text = pair_pass(
      text, [](char a, char b) { return is_period_or_comma(a) && !is_digit(b); }, " ", " ", "");
  // ([0-9])(-) -> "\1 \2 "
  text = pair_pass(
      text, [](char a, char b) { return is_digit(a) && b == '-'; }, "", " ", " ");
  return join_python_words(text);
}

std::string tokenize_none(std::string_view line) {
  return std::string(line);
}

std::string tokenize(std::string_view line, std::string_view tokenizer) {
  if (tokenizer == "13a") return tokenize_13a(line);
  if (tokenizer == "none") return tokenize_none(line);
  if (tokenizer == "intl") return tokenize_intl(line);
  if (tokenizer == "char") return tokenize_char(line);
  if (tokenizer == "zh") return tokenize_zh(line);
  throw std::invalid_argument("tokenizer '" + std::string(tokenizer) +
                              "' is not available: use 13a, none, intl, char or zh");
}

}  // namespace nmt::eval
