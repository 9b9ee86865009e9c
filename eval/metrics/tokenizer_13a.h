#pragma once
// sacreBLEU 2.x's 13a, regexp and none tokenizers (tokenizers/tokenizer_13a.py, tokenizer_re.py,
// tokenizer_none.py) and the dispatch by tokenizer name. They work on Python str semantics
// (python_str.h): scores only agree with sacreBLEU when those agree.

#include <string>
#include <string_view>

namespace nmt::eval {

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
