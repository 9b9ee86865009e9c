// The intl, char, zh and Tercom tokenizers against sacreBLEU 2.x. Expected strings were derived
// by hand from each tokenizer's rules (see the headers) and checked once against sacrebleu
// 2.6.0's TokenizerV14International, TokenizerChar, TokenizerZh and TercomTokenizer.

#include <gtest/gtest.h>

#include "eval/metrics/tokenizer_13a.h"
#include "eval/metrics/tokenizer_char_zh.h"
#include "eval/metrics/tokenizer_intl.h"
#include "eval/metrics/tokenizer_ter.h"

namespace nmt::eval {
namespace {

TEST(TokenizerIntl, SplitsUnicodePunctuationAndSymbols) {
  // '.' between digits stays; the final "1990." keeps its period (no padding, as in mteval-v14);
  // € is a currency symbol (Sc), split off.
  EXPECT_EQ(tokenize_intl("Hello, world! 3.14 and €5 in 1990."),
            "Hello , world ! 3.14 and € 5 in 1990.");
  // « » ¿ — are punctuation (Pi, Pf, Po, Pd) in ICU's tables.
  EXPECT_EQ(tokenize_intl("«Qué?» dijo—no."), "« Qué ? » dijo — no .");
  EXPECT_EQ(tokenize("a+b", "intl"), "a + b");  // '+' is Sm
}

TEST(TokenizerChar, EveryCharacterIsAToken) {
  EXPECT_EQ(tokenize_char("ab c"), "a b   c");  // the space is a character too
  EXPECT_EQ(tokenize("日本語", "char"), "日 本 語");
}

TEST(TokenizerZh, IsolatesChineseThenRunsTheRegexPasses) {
  EXPECT_EQ(tokenize_zh(" 我爱北京。GPU-3.5, ok. "), "我 爱 北 京 。 GPU-3.5 , ok .");
  // sacreBLEU's u'\u20000' bound makes U+2001..U+2A6D "Chinese": the em dash is isolated.
  EXPECT_EQ(tokenize_zh("a—b"), "a — b");
  EXPECT_TRUE(is_zh_tokenizer_char(U'\u2014'));
  EXPECT_FALSE(is_zh_tokenizer_char(U'\u2000'));
  EXPECT_FALSE(is_zh_tokenizer_char(U'\U00020000'));  // Extension B is left out by the quirk
  EXPECT_TRUE(is_zh_tokenizer_char(U'\uFF0C'));       // full-width comma
}

TEST(TokenizerTer, DefaultOnlyLowercasesAndCollapses) {
  EXPECT_EQ(tokenize_ter("  The  Cat.  ", {}), "the cat.");
  EXPECT_EQ(tokenize_ter("", {}), "");
}

TEST(TokenizerTer, NormalizedAndPunctuation) {
  TerOptions norm;
  norm.normalized = true;
  EXPECT_EQ(tokenize_ter("John's car, 3.5 &amp; 1990-2000.", norm),
            "john 's car , 3.5 & 1990 - 2000 .");
  TerOptions no_punct;
  no_punct.no_punct = true;
  EXPECT_EQ(tokenize_ter("Hi, (there)!", no_punct), "hi there");
}

TEST(TokenizerTer, AsianSupport) {
  TerOptions norm_asian;
  norm_asian.normalized = true;
  norm_asian.asian_support = true;
  EXPECT_EQ(tokenize_ter("我爱北京。ok", norm_asian), "我 爱 北 京 。 ok");
  TerOptions punct_asian;
  punct_asian.no_punct = true;
  punct_asian.asian_support = true;
  EXPECT_EQ(tokenize_ter("我爱，北京。", punct_asian), "我爱北京");
}

}  // namespace
}  // namespace nmt::eval
