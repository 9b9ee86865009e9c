// char and zh tokenizers (see tokenizer_char_zh.h).

#include "eval/metrics/tokenizer_char_zh.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

#include "eval/metrics/char_passes.h"
#include "eval/metrics/python_str.h"
#include "eval/metrics/tokenizer_13a.h"

namespace nmt::eval {
namespace {

struct Range {
  std::uint32_t first, last;
};

// sacreBLEU's _UCODE_RANGES as Python evaluates them, sorted; see the header for the two
// two-character bounds.
constexpr Range kZhRanges[] = {
    {0x2001, 0x2A6D},  // u'\u20000'..u'\u2a6d6' ('\u2000' '0' .. '\u2a6d' '6')
    {0x2E80, 0x2EFF}, {0x2F00, 0x2FDF}, {0x2F81, 0x2FA1},  // u'\u2f800'..u'\u2fa1d'
    {0x2FF0, 0x2FFF}, {0x3000, 0x303F}, {0x3100, 0x312F}, {0x31A0, 0x31BF},
    {0x31C0, 0x31EF}, {0x3200, 0x32FF}, {0x3300, 0x33FF}, {0x3400, 0x4DB5},
    {0x4E00, 0x9FA5}, {0x9FA6, 0x9FBB}, {0xF900, 0xFA2D}, {0xFA30, 0xFA6A},
    {0xFA70, 0xFAD9}, {0xFE10, 0xFE1F}, {0xFE30, 0xFE4F}, {0xFF00, 0xFFEF},
};
// Listed but already covered by the first range: U+2600..U+26FF and U+2700..U+27BF.

}  // namespace

bool is_zh_tokenizer_char(char32_t c) {
  return std::any_of(std::begin(kZhRanges), std::end(kZhRanges),
                     [c](const Range& r) { return c >= r.first && c <= r.last; });
}

std::string tokenize_char(std::string_view line) {
  const std::u32string text = decode_utf8(line);
  std::u32string out;
  out.reserve(2 * text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (i > 0) out.push_back(U' ');
    out.push_back(text[i]);
  }
  return encode_utf8(out);
}

std::string tokenize_zh(std::string_view line) {
  const std::u32string text = decode_utf8(line);
  std::size_t begin = 0, end = text.size();
  while (begin < end && is_python_whitespace(text[begin])) ++begin;  // str.strip()
  while (end > begin && is_python_whitespace(text[end - 1])) --end;
  const std::u32string_view stripped = std::u32string_view(text).substr(begin, end - begin);
  return tokenize_regexp(encode_utf8(pad_chars(stripped, is_zh_tokenizer_char)));
}

}  // namespace nmt::eval
