// The intl tokenizer on code points with ICU's general categories (see tokenizer_intl.h). Each
// regex pass is replayed as re.sub does it: left to right, non-overlapping, a match consuming both
// characters of the pair.

#include "eval/metrics/tokenizer_intl.h"

#include <unicode/uchar.h>

#include "eval/metrics/char_passes.h"
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

}  // namespace

std::string tokenize_intl(std::string_view line) {
  const std::u32string text = decode_utf8(line);
  const auto not_number = [](char32_t c) { return !is_number(c); };
  std::u32string pass = pair_pass(
      text, [&](char32_t a, char32_t b) { return not_number(a) && is_punctuation(b); }, U"", U" ",
      U" ");
  pass = pair_pass(
      pass, [&](char32_t a, char32_t b) { return is_punctuation(a) && not_number(b); }, U" ", U" ",
      U"");
  return encode_utf8(join_python_words(pad_chars(pass, is_symbol)));
}

}  // namespace nmt::eval
