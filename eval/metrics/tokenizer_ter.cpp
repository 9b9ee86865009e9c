// Tercom's normalizer as sacreBLEU runs it (see tokenizer_ter.h). Every pattern names single
// characters, so each re.sub is a character-level rewrite; the passes that pad characters with
// spaces commute once whitespace is collapsed, which lets the Asian ones share one set.

#include "eval/metrics/tokenizer_ter.h"

#include "eval/metrics/char_passes.h"
#include "eval/metrics/python_str.h"

namespace nmt::eval {
namespace {

std::u32string replace_all(std::u32string_view text, std::u32string_view from,
                           std::u32string_view to) {
  std::u32string out;
  out.reserve(text.size());
  std::size_t start = 0;
  for (std::size_t pos; (pos = text.find(from, start)) != std::u32string_view::npos;) {
    out.append(text.substr(start, pos - start)).append(to);
    start = pos + from.size();
  }
  return out.append(text.substr(start));
}

bool is_digit(char32_t c) {
  return c >= U'0' && c <= U'9';
}
bool is_period_or_comma(char32_t c) {
  return c == U'.' || c == U',';
}
// [{-~[-` -&(-+:-@/]
bool is_tercom_symbol(char32_t c) {
  return (c >= U'{' && c <= U'~') || (c >= U'[' && c <= U'`') || (c >= U' ' && c <= U'&') ||
         (c >= U'(' && c <= U'+') || (c >= U':' && c <= U'@') || c == U'/';
}

// TercomTokenizer.ASIAN_PUNCT and FULL_WIDTH_PUNCT.
bool is_asian_punct(char32_t c) {
  return c == 0x3001 || c == 0x3002 || (c >= 0x3008 && c <= 0x3011) ||
         (c >= 0x3014 && c <= 0x301F) || (c >= 0xFF61 && c <= 0xFF65) || c == 0x30FB;
}
bool is_full_width_punct(char32_t c) {
  switch (c) {
    case 0xFF0E:
    case 0xFF0C:
    case 0xFF1F:
    case 0xFF1A:
    case 0xFF1B:
    case 0xFF01:
    case 0xFF02:
    case 0xFF08:
    case 0xFF09:
      return true;
    default:
      return false;
  }
}
// Every character _normalize_asian pads with spaces.
bool is_asian_split(char32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x31C0 && c <= 0x31EF) || (c >= 0x2E80 && c <= 0x2EFF) ||
         (c >= 0x3300 && c <= 0x33FF) || (c >= 0xF900 && c <= 0xFAFF) ||
         (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0x3200 && c <= 0x3F22) || is_asian_punct(c) ||
         is_full_width_punct(c);
}

std::u32string normalize_general_and_western(std::u32string_view sent) {
  std::u32string text = replace_all(sent, U"\n-", U"");
  text = replace_all(text, U"\n", U" ");
  text = replace_all(text, U"&quot;", U"\"");
  text = replace_all(text, U"&amp;", U"&");
  text = replace_all(text, U"&lt;", U"<");
  text = replace_all(text, U"&gt;", U">");
  text = pad_chars(U" " + text + U" ", is_tercom_symbol);
  text = replace_all(text, U"'s ", U" 's ");
  text = pair_pass(
      text, [](char32_t a, char32_t b) { return !is_digit(a) && is_period_or_comma(b); }, U"", U" ",
      U" ");
  text = pair_pass(
      text, [](char32_t a, char32_t b) { return is_period_or_comma(a) && !is_digit(b); }, U" ",
      U" ", U"");
  return pair_pass(
      text, [](char32_t a, char32_t b) { return is_digit(a) && b == U'-'; }, U"", U" ", U" ");
}

bool is_tercom_punct(char32_t c) {
  switch (c) {
    case U'.':
    case U',':
    case U'?':
    case U':':
    case U';':
    case U'!':
    case U'"':
    case U'(':
    case U')':
      return true;
    default:
      return false;
  }
}

}  // namespace

std::string tokenize_ter(std::string_view line, const TerOptions& options) {
  if (line.empty()) return "";
  std::u32string text = decode_utf8(line);
  if (!options.case_sensitive) text = python_lower(text);
  if (options.normalized) {
    text = normalize_general_and_western(text);
    if (options.asian_support) text = pad_chars(text, is_asian_split);
  }
  if (options.no_punct) {
    std::u32string kept;
    kept.reserve(text.size());
    for (const char32_t c : text) {
      const bool asian = options.asian_support && (is_asian_punct(c) || is_full_width_punct(c));
      if (!is_tercom_punct(c) && !asian) kept.push_back(c);
    }
    text = std::move(kept);
  }
  return encode_utf8(join_python_words(text));
}

}  // namespace nmt::eval
