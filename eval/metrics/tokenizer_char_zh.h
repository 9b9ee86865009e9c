#pragma once
// sacreBLEU 2.x's "char" and "zh" BLEU tokenizers (tokenizers/tokenizer_char.py,
// tokenizer_zh.py).
//   char: every code point joined by spaces, so BLEU's tokens are the non-whitespace characters.
//   zh:   str.strip(), spaces around every "Chinese character", then TokenizerRegexp (13a's regex
//         passes without 13a's unescaping or padding).
// zh's "Chinese characters" are sacreBLEU's own list of ranges, not a Unicode property, so no ICU
// here. Two of its entries are written u'\u20000' and u'\u2f800' in Python, which are two-character
// strings ('\u2000' + '0'); compared against one character they make the ranges U+2001..U+2A6D and
// U+2F81..U+2FA1 (general punctuation, arrows, mathematical operators... count as Chinese) and
// leave CJK Extension B out. That is what sacreBLEU computes, so it is mirrored.

#include <string>
#include <string_view>

namespace nmt::eval {

std::string tokenize_char(std::string_view line);
std::string tokenize_zh(std::string_view line);

// Whether sacreBLEU's zh tokenizer isolates `c` (its _is_chinese_char, quirks included).
bool is_zh_tokenizer_char(char32_t c);

}  // namespace nmt::eval
