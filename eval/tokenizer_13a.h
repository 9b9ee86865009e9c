#pragma once
// The text layer under sacreBLEU's metrics, mirrored from sacreBLEU 2.x
// (tokenizers/tokenizer_13a.py, tokenizer_re.py, tokenizer_none.py) and from the Python str
// semantics it inherits: strict UTF-8, str.split()/rstrip() whitespace and str.lower() (full
// Unicode, with the Final_Sigma rule). Scores only agree with sacreBLEU when these agree, so each
// function says which Python behaviour it reproduces.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nmt::eval {

// ---- Python str semantics ------------------------------------------------------------------

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

// str.rstrip() with no argument.
std::string_view rstrip_python_whitespace(std::string_view utf8);

// str.lower(): full Unicode lowercase mapping of the Python 3.11 database (Unicode 14), including
// U+0130 -> "i\u0307" and capital sigma -> final sigma at word ends. The Final_Sigma context is
// exact for Latin, Greek, Cyrillic, Armenian and general punctuation; elsewhere a neighbour counts
// as neither cased nor case-ignorable (only matters next to a capital sigma).
std::u32string python_lower(std::u32string_view text);
std::string python_lower(std::string_view utf8);

// ---- Tokenizers ------------------------------------------------------------------------------

// mteval-v13a as sacreBLEU runs it: drop "<skipped>", join "-\n", \n -> space, unescape &quot;
// &amp; &lt; &gt; (in that order, once each), then the four regex passes of TokenizerRegexp:
// ASCII symbols split off; '.' and ',' split unless preceded or followed by an ASCII digit;
// '-' split after an ASCII digit; finally whitespace (Python's) collapsed to single spaces.
std::string tokenize_13a(std::string_view line);

// TokenizerRegexp alone, the part 13a and zh share: the four regex passes and the whitespace
// collapse, without 13a's unescaping and without the spaces 13a puts around the line first (so
// "5." at the very end of a zh line keeps its period, as in sacreBLEU).
std::string tokenize_regexp(std::string_view line);

// sacreBLEU's "none": the line unchanged (n-grams then split on whitespace).
std::string tokenize_none(std::string_view line);

// The BLEU tokenizers nmt-bleu has, in sacreBLEU's names: 13a, none, intl, char, zh.
inline constexpr const char* kBleuTokenizers[] = {"13a", "none", "intl", "char", "zh"};

// Dispatch by sacreBLEU's tokenizer name (kBleuTokenizers); std::invalid_argument otherwise (the
// MeCab and SentencePiece tokenizers, ja-mecab ko-mecab spm flores101 flores200, are not built in).
std::string tokenize(std::string_view line, std::string_view tokenizer);

}  // namespace nmt::eval
