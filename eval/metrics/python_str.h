#pragma once
// The Python str semantics under sacreBLEU's metrics: strict UTF-8, str.split()/rstrip()
// whitespace and str.lower() (full Unicode, with the Final_Sigma rule), as Python 3.11 has them.
// Every tokenizer and metric builds on these, so each function says which Python behaviour it
// reproduces.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nmt::eval {

// Byte offset of the first byte that Python's strict 'utf-8' codec rejects (overlong forms,
// surrogates, code points above U+10FFFF, truncated sequences), or nullopt when `text` is valid.
std::optional<std::size_t> find_invalid_utf8(std::string_view text);

// Strict UTF-8 to code points; throws std::invalid_argument naming the bad byte offset.
std::u32string decode_utf8(std::string_view text);
std::string encode_utf8(std::u32string_view text);

// Python's str.isspace(): ASCII \t\n\v\f\r, U+001C..U+001F, space, U+0085, U+00A0, U+1680,
// U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000. Zero-width space is not whitespace.
bool is_python_whitespace(char32_t c);

// str.split() with no argument: runs of whitespace separate, no empty pieces.
std::vector<std::string_view> split_python_whitespace(std::string_view utf8);
std::vector<std::u32string_view> split_python_whitespace(std::u32string_view text);

// " ".join(text.split()): the words, one space apart.
std::u32string join_python_words(std::u32string_view text);

// str.rstrip() with no argument.
std::string_view rstrip_python_whitespace(std::string_view utf8);

// str.lower(): full Unicode lowercase mapping of the Python 3.11 database (Unicode 14), including
// U+0130 -> "i\u0307" and capital sigma -> final sigma at word ends. The Final_Sigma context is
// exact for Latin, Greek, Cyrillic, Armenian and general punctuation; elsewhere a neighbour counts
// as neither cased nor case-ignorable (only matters next to a capital sigma).
std::u32string python_lower(std::u32string_view text);
std::string python_lower(std::string_view utf8);

}  // namespace nmt::eval
