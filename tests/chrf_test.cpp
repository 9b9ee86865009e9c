// chrF and chrF++ against sacreBLEU 2.x: hand-computed character/word n-gram examples, the
// whitespace and punctuation handling, best-reference choice, corpus aggregation of statistics,
// both smoothing modes, signatures, and regression values traced through sacreBLEU's algorithm.

#include <gtest/gtest.h>

#include <stdexcept>

#include "eval/metrics/bleu.h"
#include "eval/metrics/chrf.h"
#include "eval/metrics/tokenizer_13a.h"
#include "tests/regression_corpora.h"

namespace nmt::eval {
namespace {

using Streams = std::vector<std::vector<std::string>>;

double chrf_of(const std::string& hyp, const std::string& ref, ChrfOptions options = {}) {
  return corpus_chrf({hyp}, {{ref}}, options).score;
}

ChrfOptions chrf_plus_plus() {
  ChrfOptions options;
  options.word_order = 2;
  return options;
}

TEST(Chrf, IdentityIsHundredAndEmptyHypothesisZero) {
  EXPECT_DOUBLE_EQ(chrf_of("The cat sat on the mat.", "The cat sat on the mat."), 100.0);
  EXPECT_DOUBLE_EQ(chrf_of("The cat sat on the mat.", "The cat sat on the mat.", chrf_plus_plus()),
                   100.0);
  EXPECT_EQ(chrf_of("", "The cat sat on the mat."), 0.0);
  EXPECT_EQ(chrf_of("xyz", "abc"), 0.0);
}

TEST(Chrf, HandComputedShortHypothesis) {
  // "ab" vs "abc": 1-grams P 2/2 R 2/3, 2-grams P 1/1 R 1/2; the hypothesis has no 3-grams
  // and the reference no 4..6-grams, so only two orders count: P = 1, R = 7/12,
  // F2 = 5PR / (4P + R) = 7/11.
  EXPECT_NEAR(chrf_of("ab", "abc"), 700.0 / 11, 1e-9);
  // Code points, not bytes: the same holds for two- and three-character CJK strings.
  EXPECT_NEAR(chrf_of("日本", "日本語"), 700.0 / 11, 1e-9);
}

TEST(Chrf, HandComputedChrfAndChrfPlusPlus) {
  // "ab cd" vs "ab ce" -> "abcd" vs "abce": orders 1..4 give 3/4, 2/3, 1/2, 0/1 (P = R).
  EXPECT_NEAR(chrf_of("ab cd", "ab ce"), 100.0 * 23 / 48, 1e-9);
  // Word 1-grams [ab cd] vs [ab ce]: 1/2; word 2-grams 0/1. (23/12 + 1/2 + 0) / 6 = 29/72.
  EXPECT_NEAR(chrf_of("ab cd", "ab ce", chrf_plus_plus()), 100.0 * 29 / 72, 1e-9);
}

TEST(Chrf, WhitespaceIsRemovedFromCharacterNgrams) {
  EXPECT_DOUBLE_EQ(chrf_of("a b", "ab"), 100.0);
  EXPECT_DOUBLE_EQ(chrf_of("a\u00a0\tb", "ab"), 100.0);  // Python's whitespace, all of it
  ChrfOptions keep;
  keep.whitespace = true;
  // "a b" vs "ab": 1-grams P 2/3 R 1, 2-grams 0/2 and 0/1; F2 = 5 * (1/3)(1/2) / (4/3 + 1/2).
  EXPECT_NEAR(chrf_of("a b", "ab", keep), 100.0 * 5 / 11, 1e-9);
}

TEST(Chrf, WordsSplitOnePunctuationMarkOffEachWord) {
  const auto words = chrf_words(U"(hi) there, friend. 'quote , x");
  const std::vector<std::u32string> expected = {U"(hi", U")", U"there", U",", U"friend",
                                                U".",   U"'", U"quote", U",", U"x"};
  EXPECT_EQ(words, expected);
  // Only ASCII punctuation, and only one character: "«word»" and "end?!" keep the rest.
  const auto other = chrf_words(U"«word» end?!");
  const std::vector<std::u32string> expected_other = {U"«word»", U"end?", U"!"};
  EXPECT_EQ(other, expected_other);
}

TEST(Chrf, BestReferenceByFScore) {
  const auto r = corpus_chrf({"abc"}, {{"xyz"}, {"abc"}}, {});
  EXPECT_DOUBLE_EQ(r.score, 100.0);
  // "abcd" vs "abcdef": P 1, R 0.525 -> F 0.580; vs "ab": P 5/12, R 1 -> F 0.781. The stats
  // are the second reference's own (2 reference unigrams), not a merge of both.
  const auto stats = chrf_segment_stats("abcd", {"abcdef", "ab"}, {});
  EXPECT_EQ(stats[1], 2);
  EXPECT_EQ(stats.size(), 18u);
}

TEST(Chrf, ShortReferenceLeavesOrdersOut) {
  // Reference "ab" has no 3-grams: the hypothesis' 3-grams are not counted at all.
  const auto stats = chrf_segment_stats("abcd", {"ab"}, {});
  EXPECT_EQ(stats[6], 0);  // hypothesis 3-grams
  EXPECT_EQ(stats[7], 0);  // reference 3-grams
  EXPECT_EQ(stats[0], 4);
}

TEST(Chrf, CorpusSumsStatisticsBeforeScoring) {
  // Sentence scores 100 and 0 average 50; summed counts give 1-grams 3/5, 2-grams 2/3,
  // 3-grams 1/1 (P = R), so (3/5 + 2/3 + 1) / 3 = 68/90.
  const auto r = corpus_chrf({"abc", "de"}, {{"abc", "fg"}}, {});
  EXPECT_NEAR(r.score, 100.0 * 68 / 90, 1e-9);
  EXPECT_EQ(r.stats[0], 5);
  EXPECT_EQ(r.stats[2], 3);
}

TEST(Chrf, EpsSmoothingAveragesPerOrderFScores) {
  ChrfOptions eps;
  eps.eps_smoothing = true;
  // "ab" vs "abc": F(1) = 10/14, F(2) = 5/9, F(3) = 0, orders 4..6 add 1e-16 each; / 6.
  EXPECT_NEAR(chrf_of("ab", "abc", eps), 100.0 * (10.0 / 14 + 5.0 / 9) / 6, 1e-9);
  EXPECT_NEAR(chrf_of("ab", "abc", eps), 21.1640, 5e-5);
}

TEST(Chrf, LowercaseOption) {
  ChrfOptions lc;
  lc.lowercase = true;
  EXPECT_DOUBLE_EQ(chrf_of("ΟΔΟΣ ABC", "οδος abc", lc), 100.0);
  EXPECT_EQ(chrf_of("ABC", "abc"), 0.0);
}

TEST(Chrf, NamesAndSignatures) {
  EXPECT_EQ(chrf_name({}), "chrF2");
  EXPECT_EQ(chrf_name(chrf_plus_plus()), "chrF2++");
  // The version field names nmt-bleu, never a bare sacreBLEU version.
  const std::string version = "nmt-bleu-2.4.0";
  EXPECT_EQ(kSignatureVersion, version);
  EXPECT_EQ(chrf_signature({}, "1"),
            "nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:" + version);
  ChrfOptions options = chrf_plus_plus();
  options.lowercase = true;
  options.eps_smoothing = true;
  options.whitespace = true;
  EXPECT_EQ(chrf_signature(options, "var"),
            "nrefs:var|case:lc|eff:no|nc:6|nw:2|space:yes|version:" + version);
  EXPECT_EQ(chrf_signature_fields(options, "2").format(/*short_form=*/true),
            "#:2|c:lc|e:no|nc:6|nw:2|s:yes|v:" + version);
  EXPECT_EQ(format_score_line(chrf_name({}), 56.25, 1, "", ""), "chrF2 = 56.2");
}

TEST(Chrf, RejectsBadInput) {
  ChrfOptions none;
  none.char_order = 0;
  EXPECT_THROW(none.validate(), std::invalid_argument);
  ChrfOptions beta;
  beta.beta = -1;
  EXPECT_THROW(beta.validate(), std::invalid_argument);
  EXPECT_THROW(corpus_chrf({"a", "b"}, {{"a"}}, {}), std::invalid_argument);
  EXPECT_EQ(corpus_chrf({"a"}, {{""}}, {}).score, 0.0);  // an all-empty segment is scored: 0
}

// ---- Regression values (sacreBLEU's algorithm traced step by step) --------------------------

TEST(ChrfRegression, EnglishCorpusOneReference) {
  const auto& hyps = testing::kEnglishHyps;
  const Streams& refs = testing::kEnglishRefs;
  EXPECT_NEAR(corpus_chrf(hyps, refs, {}).score, 64.8440, 5e-5);
  EXPECT_NEAR(corpus_chrf(hyps, refs, chrf_plus_plus()).score, 63.5295, 5e-5);
  ChrfOptions lc = chrf_plus_plus();
  lc.lowercase = true;
  EXPECT_NEAR(corpus_chrf(hyps, refs, lc).score, 65.0292, 5e-5);
}

TEST(ChrfRegression, UnicodeCorpusTwoReferencesOneEmpty) {
  const auto& hyps = testing::kUnicodeHyps;
  const Streams& refs = testing::kUnicodeRefs;
  const auto plain = corpus_chrf(hyps, refs, {});
  EXPECT_NEAR(plain.score, 65.3370, 5e-5);
  EXPECT_EQ(plain.signature.substr(0, 8), "nrefs:2|");  // '' is a reference (sacreBLEU 2.x)
  EXPECT_NEAR(corpus_chrf(hyps, refs, chrf_plus_plus()).score, 60.7390, 5e-5);
  ChrfOptions lc = chrf_plus_plus();
  lc.lowercase = true;
  EXPECT_NEAR(corpus_chrf(hyps, refs, lc).score, 64.9338, 5e-5);
}

}  // namespace
}  // namespace nmt::eval
