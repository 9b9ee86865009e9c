// The intl tokenizer on code points with ICU's general categories (see tokenizer_intl.h). Each
// regex pass is replayed as re.sub does it: left to right, non-overlapping, a match consuming both
// characters of the pair.

#include "eval/metrics/tokenizer_intl.h"

#include <unicode/uchar.h>

#include "eval/metrics/python_str.h"

namespace nmt::eval {
namespace {

bool in_category(char32_t c, std::uint32_t mask) {
  return (U_GET_GC_MASK(static_cast<UChar32>(c)) & mask) != 0;
}
bool is_punctuation(char32_t c) {
  return in_category(c, U_GC_P_MASK);
}
bool is_symbol(char32_t c) {
  return in_category(c, U_GC_S_MASK);
}
bool is_number(char32_t c) {
  return in_category(c, U_GC_N_MASK);
}

// One pass of (A)(B) -> replacement, where `before`, `between` and `after` are what the
// replacement puts around \1 and \2.
template <typename First, typename Second>
std::u32string pair_pass(std::u32string_view text, First first, Second second,
                         std::u32string_view before, std::u32string_view between,
                         std::u32string_view after) {
  std::u32string out;
  out.reserve(text.size() + text.size() / 2);
  std::size_t i = 0;
  while (i < text.size()) {
    if (i + 1 < text.size() && first(text[i]) && second(text[i + 1])) {
      out.append(before).append(1, text[i]).append(between).append(1, text[i + 1]).append(after);
      i += 2;
    } else {
      out.push_back(text[i++]);
    }
  }
  return out;
}

}  // namespace

std::string tokenize_intl(std::string_view line) {
  const std::u32string text = decode_utf8(line);
  const auto not_number = [](char32_t c) { return !is_number(c); };
  std::u32string pass = pair_pass(text, not_number, is_punctuation, U"", U" ", U" ");
  pass = pair_pass(pass, is_punctuation, not_number, U" ", U" ", U"");
  std::u32string spaced;
  spaced.reserve(pass.size() + pass.size() / 2);
  for (const char32_t c : pass) {
    if (is_symbol(c)) {
      spaced.push_back(U' ');
      spaced.push_back(c);
      spaced.push_back(U' ');
    } else {
      spaced.push_back(c);
    }
  }
  std::u32string out;
  for (const auto word : split_python_whitespace(std::u32string_view(spaced))) {
    if (!out.empty()) out.push_back(U' ');
    out.append(word);
  }
  return encode_utf8(out);
}

}  // namespace nmt::eval
