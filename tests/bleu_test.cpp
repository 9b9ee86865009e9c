// BLEU and the text layer under it, against sacreBLEU 2.x: hand-worked scores (identity, empty
// hypothesis, brevity penalty, every smoothing method, multiple references), the 13a tokenizer's
// rules, Python's whitespace/lowercase semantics, and regression values of small corpora obtained
// by tracing sacreBLEU's algorithm step by step.

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "eval/metrics/bleu.h"
#include "eval/metrics/python_str.h"
#include "eval/metrics/tokenizer_13a.h"
#include "tests/regression_corpora.h"

namespace nmt::eval {
namespace {

using Streams = std::vector<std::vector<std::string>>;

BleuScore score_of(const std::string& hyp, const std::string& ref, BleuOptions options = {}) {
  return corpus_bleu({hyp}, {{ref}}, options).score;
}

// ---- 13a tokenizer --------------------------------------------------------------------------

TEST(Tokenizer13a, SplitsAsciiPunctuationAndSymbols) {
  EXPECT_EQ(tokenize_13a("Hello, world!"), "Hello , world !");
  EXPECT_EQ(tokenize_13a("price: $5 {x} [y] (z) a/b @me #1 ^_^ `q` ~ | \\ * + = ; <>"),
            "price : $ 5 { x } [ y ] ( z ) a / b @ me # 1 ^ _ ^ ` q ` ~ | \\ * + = ; < >");
  // The apostrophe is outside mteval's symbol class, and so are non-ASCII marks.
  EXPECT_EQ(tokenize_13a("it's ¿Qué? naïve café."), "it's ¿Qué ? naïve café .");
}

TEST(Tokenizer13a, KeepsPeriodsAndCommasInsideNumbers) {
  EXPECT_EQ(tokenize_13a("It costs 3.5 or 1,000 units."), "It costs 3.5 or 1,000 units .");
  // Split unless a digit precedes, and unless a digit follows: each side decides alone.
  EXPECT_EQ(tokenize_13a("U.S. e.g. 5.x x.5 ,5 5, a,b"),
            "U . S . e . g . 5 . x x . 5 , 5 5 , a , b");
  EXPECT_EQ(tokenize_13a("version 2.4.0"), "version 2.4.0");
}

TEST(Tokenizer13a, SplitsDashOnlyAfterDigit) {
  EXPECT_EQ(tokenize_13a("well-known 1990-2000 -5"), "well-known 1990 - 2000 -5");
  EXPECT_EQ(tokenize_13a("2.4.0-rc1 and 3-4-5"), "2.4.0 - rc1 and 3 - 4 - 5");
}

TEST(Tokenizer13a, UnescapesEntitiesOnceInOrder) {
  // &amp;lt; becomes &lt; in the &amp; pass and then < in the later &lt; pass.
  EXPECT_EQ(tokenize_13a("&quot;Tom &amp; Jerry&quot; &lt;3 &amp;lt; &gt;"),
            "\" Tom & Jerry \" < 3 < >");
  // &quot; runs before &amp;, so a double-escaped quote stays an entity (then split up).
  EXPECT_EQ(tokenize_13a("&amp;quot;"), "& quot ;");
}

TEST(Tokenizer13a, DropsSkippedAndJoinsHyphenatedLineBreaks) {
  EXPECT_EQ(tokenize_13a("a <skipped> b"), "a b");
  EXPECT_EQ(tokenize_13a("<skip<skipped>ped>"), "< skipped >");  // one pass, like str.replace
  EXPECT_EQ(tokenize_13a("hyph-\nenated\nline"), "hyphenated line");
}

TEST(Tokenizer13a, CollapsesPythonWhitespaceOnly) {
  // NBSP and the ideographic space are whitespace to Python; the zero-width space is not.
  EXPECT_EQ(tokenize_13a("  a\u00a0b\u3000c\u200bd\t\r "), "a b c\u200bd");
  EXPECT_EQ(tokenize_13a(""), "");
}

TEST(Tokenizer13a, NoneTokenizerAndDispatch) {
  EXPECT_EQ(tokenize("Hello, world!", "none"), "Hello, world!");
  EXPECT_EQ(tokenize("Hello, world!", "13a"), "Hello , world !");
  EXPECT_THROW(tokenize("x", "ja-mecab"), std::invalid_argument);
}

// ---- Python str semantics -------------------------------------------------------------------

TEST(PythonText, LowerFollowsPythonIncludingSpecialCases) {
  EXPECT_EQ(python_lower(std::string("ÀÉÎ ŸǄ ДОМ Straße ẞ")), "àéî ÿǆ дом straße ß");
  EXPECT_EQ(python_lower(std::string("İ")), "i\u0307");  // the one two-character mapping
  // Capital sigma: final at a word end, also before case-ignorable punctuation.
  EXPECT_EQ(python_lower(std::string("ΟΔΟΣ ΣΑ ΟΔΟΣ. Σ")), "οδος σα οδος. σ");
  EXPECT_EQ(python_lower(std::string("ΑΣ'Α")), "ασ'α");  // the apostrophe is case-ignorable
}

TEST(PythonText, WhitespaceSplitAndStrip) {
  const auto words = split_python_whitespace(std::string_view("\x1c a\u2009b\u0085c  "));
  ASSERT_EQ(words.size(), 3u);
  EXPECT_EQ(words[0], "a");
  EXPECT_EQ(words[2], "c");
  EXPECT_EQ(rstrip_python_whitespace("x y \r\u00a0\u3000"), "x y");
  EXPECT_EQ(rstrip_python_whitespace("x\u200b"), "x\u200b");
}

TEST(PythonText, Utf8ValidationMatchesStrictCodec) {
  EXPECT_FALSE(find_invalid_utf8("plain ascii, é, 中, \U0001F600").has_value());
  EXPECT_EQ(find_invalid_utf8("ab\xC0\xAF"), 2u);         // overlong '/'
  EXPECT_EQ(find_invalid_utf8("\xED\xA0\x80"), 0u);       // surrogate
  EXPECT_EQ(find_invalid_utf8("x\xF4\x90\x80\x80"), 1u);  // above U+10FFFF
  EXPECT_EQ(find_invalid_utf8("x\xE2\x82"), 1u);          // truncated
  EXPECT_EQ(encode_utf8(decode_utf8("é中\U0001F600")), "é中\U0001F600");
  EXPECT_THROW(decode_utf8("\xFF"), std::invalid_argument);
}

TEST(PythonText, SplitLinesLikeSacreBleuReadsThem) {
  // Files: only \n ends a line; the \r left behind is stripped with the other trailing spaces.
  const auto file = split_lines("a \r\nb\rc\n\nlast", "ref.txt", false);
  EXPECT_EQ(file, (std::vector<std::string>{"a", "b\rc", "", "last"}));
  // stdin: universal newlines.
  const auto piped = split_lines("a\r\nb\rc\n", "<stdin>", true);
  EXPECT_EQ(piped, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(split_lines("", "empty", false).empty());
  try {
    split_lines("ok\nbad \xFF\n", "hyp.txt", false);
    ADD_FAILURE() << "expected invalid UTF-8 to throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("hyp.txt"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("line 2"), std::string::npos);
  }
}

// ---- BLEU, hand-worked ----------------------------------------------------------------------

TEST(Bleu, IdentityIsHundred) {
  const auto s = score_of("The quick brown fox jumps over the lazy dog.",
                          "The quick brown fox jumps over the lazy dog.");
  EXPECT_DOUBLE_EQ(s.score, 100.0);
  EXPECT_DOUBLE_EQ(s.bp, 1.0);
  for (const double p : s.precisions) EXPECT_DOUBLE_EQ(p, 100.0);
  EXPECT_EQ(s.hyp_len, 10);  // the period is a token under 13a
}

TEST(Bleu, EmptyHypothesisIsZero) {
  const auto s = score_of("", "the cat sat on the mat");
  EXPECT_EQ(s.score, 0.0);
  EXPECT_EQ(s.bp, 0.0);
  EXPECT_EQ(s.hyp_len, 0);
  EXPECT_EQ(s.ref_len, 6);
}

TEST(Bleu, BrevityPenaltyOnShortHypothesis) {
  // All n-grams match; 4 tokens against 6: BP = exp(1 - 6/4).
  const auto s = score_of("the cat sat on", "the cat sat on the mat");
  EXPECT_NEAR(s.bp, std::exp(-0.5), 1e-12);
  EXPECT_NEAR(s.score, 100 * std::exp(-0.5), 1e-9);
  EXPECT_NEAR(s.ratio, 4.0 / 6.0, 1e-12);
  // Longer than the reference: no penalty.
  EXPECT_DOUBLE_EQ(score_of("the cat sat on the mat today", "the cat sat on the mat").bp, 1.0);
}

TEST(Bleu, ExpSmoothingOfZeroFourGramMatches) {
  // 1-grams 5/6, 2-grams 3/5, 3-grams 1/4, 4-grams 0/3 -> 100 / (2 * 3).
  const auto s = score_of("the quick brown dog fox jumps", "the quick brown fox jumps");
  EXPECT_NEAR(s.precisions[3], 100.0 / 6.0, 1e-12);
  const double expected =
      std::exp((std::log(500.0 / 6) + std::log(60.0) + std::log(25.0) + std::log(100.0 / 6)) / 4);
  EXPECT_NEAR(s.score, expected, 1e-9);
  EXPECT_NEAR(s.score, 37.9918, 5e-5);
}

TEST(Bleu, EachSmoothingMethodOnTwoZeroOrders) {
  // "a b x c d" against "a b c d": 1-grams 4/5, 2-grams 2/4, 3-grams 0/3, 4-grams 0/2.
  const auto with = [](const std::string& method) {
    BleuOptions options;
    options.smooth = method;
    return score_of("a b x c d", "a b c d", options);
  };
  const auto exp = with("exp");  // 100/(2*3), then 100/(4*2): the factor doubles per zero order
  EXPECT_NEAR(exp.precisions[2], 100.0 / 6, 1e-12);
  EXPECT_NEAR(exp.precisions[3], 12.5, 1e-12);
  EXPECT_NEAR(exp.score, std::pow(80.0 * 50.0 * (100.0 / 6) * 12.5, 0.25), 1e-9);
  EXPECT_EQ(with("none").score, 0.0);
  const auto floor = with("floor");  // 0.1 of a match
  EXPECT_NEAR(floor.precisions[2], 10.0 / 3, 1e-12);
  EXPECT_NEAR(floor.score, 16.0686, 5e-5);
  const auto add_k = with("add-k");  // +1 to matches and totals from 2-grams on
  EXPECT_NEAR(add_k.precisions[1], 60.0, 1e-12);
  EXPECT_NEAR(add_k.score, std::pow(4e6, 0.25), 1e-9);
}

TEST(Bleu, NoMatchAtAllIsZeroWhateverTheSmoothing) {
  for (const char* method : {"exp", "floor", "add-k"}) {
    BleuOptions options;
    options.smooth = method;
    EXPECT_EQ(score_of("x y z w", "a b c d", options).score, 0.0) << method;
  }
}

TEST(Bleu, ClosestReferenceLengthPrefersShorterOnTies) {
  const BleuOptions options;
  // 5 tokens against 4 and 6: equally close, the shorter wins (in either order).
  EXPECT_EQ(bleu_segment_stats("a b c d e", {"a b c d e f", "a b c d"}, options).ref_len, 4);
  EXPECT_EQ(bleu_segment_stats("a b c d e", {"a b c", "a b c d e f g"}, options).ref_len, 3);
  EXPECT_EQ(bleu_segment_stats("a b c d e", {"a b", "a b c d e f"}, options).ref_len, 6);
}

TEST(Bleu, MultipleReferencesClipAtTheMaximumCount) {
  // "the" occurs at most twice in one reference: 2 of the 4 hypothesis unigrams count.
  const auto stats = bleu_segment_stats("the the the the", {"the cat", "the the dog"}, {});
  EXPECT_EQ(stats.correct[0], 2);
  EXPECT_EQ(stats.total[0], 4);
  // A second reference can only raise the score.
  const double one =
      corpus_bleu({"the cat is on the mat"}, {{"the cat sat on the mat"}}, {}).score.score;
  const double two = corpus_bleu({"the cat is on the mat"},
                                 {{"the cat sat on the mat"}, {"the cat is on a mat"}}, {})
                         .score.score;
  EXPECT_GT(two, one);
}

TEST(Bleu, LowercaseAndTokenizerOptions) {
  BleuOptions lc;
  lc.lowercase = true;
  EXPECT_DOUBLE_EQ(score_of("THE CAT SAT ON THE MAT", "the cat sat on the mat", lc).score, 100.0);
  EXPECT_LT(score_of("THE CAT SAT ON THE MAT", "the cat sat on the mat").score, 1.0);
  BleuOptions none;
  none.tokenize = "none";
  // Tokenized and untokenized text only agree under 13a.
  EXPECT_DOUBLE_EQ(score_of("Hello, big world!", "Hello , big world !").score, 100.0);
  EXPECT_LT(score_of("Hello, big world!", "Hello , big world !", none).score, 100.0);
}

TEST(Bleu, EmptyReferencesAreReferencesOfNoWords) {
  // sacreBLEU 2.x keeps '' references (it drops only None): they count in nrefs and give a
  // reference length of 0. Checked against sacrebleu 2.6.0's BLEU().corpus_score:
  // "BLEU = 84.09 66.7/75.0/100.0/100.0 (BP = 1.000 ratio = 1.500 hyp_len = 6 ref_len = 4)".
  const auto all_empty = corpus_bleu({"a b c d", "e f"}, {{"a b c d", ""}}, {});
  EXPECT_NEAR(all_empty.score.score, 84.0896, 5e-5);  // (4/6 * 3/4 * 1 * 1)^(1/4)
  EXPECT_EQ(all_empty.score.ref_len, 4);
  EXPECT_EQ(all_empty.score.verbose(),
            "66.7/75.0/100.0/100.0 (BP = 1.000 ratio = 1.500 hyp_len = 6 ref_len = 4)");
  // An empty reference beside a non-empty one: the closest length of "a b c d" is 4 (|4-0| > 0),
  // and the empty one still counts in nrefs.
  const auto result =
      corpus_bleu({"a b c d", "e f g h"}, {{"a b c d", ""}, {"a b c d", "e f g h"}}, {});
  EXPECT_DOUBLE_EQ(result.score.score, 100.0);
  EXPECT_NE(result.signature.find("nrefs:2|"), std::string::npos);
  EXPECT_EQ(corpus_bleu({"a"}, {{""}}, {}).score.score, 0.0);
  EXPECT_THROW(corpus_bleu({"a", "b"}, {{"a"}}, {}), std::invalid_argument);
  EXPECT_THROW(corpus_bleu({}, {{}}, {}), std::invalid_argument);
}

TEST(Bleu, CorpusSumsStatisticsBeforeScoring) {
  // A perfect 6-token segment and a 2-token miss: sentence scores 100 and 0 would average 50;
  // sacreBLEU sums the counts: 1-grams 6/8, 2-grams 5/6, 3-grams 4/4, 4-grams 3/3.
  const auto result = corpus_bleu({"a b c d e f", "w x"}, {{"a b c d e f", "e f"}}, {});
  EXPECT_EQ(result.stats.correct[0], 6);
  EXPECT_EQ(result.stats.total[0], 8);
  EXPECT_EQ(result.stats.total[2], 4);
  EXPECT_NEAR(result.score.score, std::pow(0.75 * (5.0 / 6), 0.25) * 100, 1e-9);
}

TEST(Bleu, TokenizedPeriodLinesAreCounted) {
  EXPECT_EQ(corpus_bleu({"a b .", "a b."}, {{"a b .", "a b."}}, {}).tokenized_period_lines, 1);
  BleuOptions force;
  force.force = true;
  EXPECT_EQ(corpus_bleu({"a b ."}, {{"a b ."}}, force).tokenized_period_lines, 0);
}

TEST(Bleu, SignatureAndTextLine) {
  EXPECT_EQ(bleu_signature({}, "1"),
            "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:nmt-bleu-2.4.0");
  EXPECT_EQ(bleu_signature_fields({}, "1").format(/*short_form=*/true),
            "#:1|c:mixed|e:no|tok:13a|s:exp|v:nmt-bleu-2.4.0");
  BleuOptions options;
  options.lowercase = true;
  options.tokenize = "none";
  options.smooth = "floor";
  EXPECT_EQ(bleu_signature(options, "2").substr(0, 51),
            "nrefs:2|case:lc|eff:no|tok:none|smooth:floor[0.10]|");
  options.smooth = "add-k";
  options.smooth_value = 0.5;
  EXPECT_NE(bleu_signature(options, "1").find("smooth:add-k[0.50]"), std::string::npos);
  const auto s = score_of("the cat sat on", "the cat sat on the mat");
  EXPECT_EQ(s.verbose(),
            "100.0/100.0/100.0/100.0 (BP = 0.607 ratio = 0.667 hyp_len = 4 ref_len = 6)");
  EXPECT_EQ(format_score_line("BLEU", s.score, 2, "", s.verbose()), "BLEU = 60.65 " + s.verbose());
  EXPECT_EQ(format_score_line("BLEU", 35.125, 1, "nrefs:1", ""), "BLEU|nrefs:1 = 35.1");
}

TEST(Bleu, RejectsUnknownOptions) {
  BleuOptions options;
  options.tokenize = "ja-mecab";  // sacreBLEU has it; nmt-bleu has no MeCab
  EXPECT_THROW(options.validate(), std::invalid_argument);
  for (const char* tok : kBleuTokenizers) {
    options.tokenize = tok;
    EXPECT_NO_THROW(options.validate()) << tok;
  }
  options.tokenize = "13a";
  options.smooth = "laplace";
  EXPECT_THROW(options.validate(), std::invalid_argument);
}

TEST(Bleu, SentenceBleuUsesEffectiveOrder) {
  // Values from sacrebleu 2.6.0: BLEU(effective_order=True).sentence_score(...).score.
  // "the cat sat" has no 4-grams: orders 1..3 all match, BP = exp(1 - 6/3).
  const auto s = sentence_bleu("the cat sat", {"the cat sat on the mat"}, {});
  EXPECT_NEAR(s.score, 100 * std::exp(-1.0), 1e-9);  // 36.787944...
  BleuOptions corpus;                                // corpus mode: the missing 4-grams give 0
  EXPECT_EQ(
      bleu_from_stats(bleu_segment_stats("the cat sat", {"the cat sat on the mat"}, corpus), corpus)
          .score,
      0.0);
  EXPECT_NEAR(sentence_bleu("a b", {"a b"}, {}).score, 100.0, 1e-9);
  // 3/4, 2/3, 1/2, then 0/1 smoothed by exp to 1/2: (3/4 * 2/3 * 1/2 * 1/2)^(1/4) = 59.4604.
  EXPECT_NEAR(sentence_bleu("a b c x", {"a b c d"}, {}).score, 59.460355750136, 1e-9);
  BleuOptions eff;
  eff.effective_order = true;
  EXPECT_NE(bleu_signature(eff, "1").find("|eff:yes|"), std::string::npos);
}

// ---- Regression values (sacreBLEU's algorithm traced step by step) --------------------------

using testing::kEnglishHyps;
using testing::kEnglishRefs;

TEST(BleuRegression, EnglishCorpusOneReference) {
  const auto r = corpus_bleu(kEnglishHyps, kEnglishRefs, {});
  EXPECT_NEAR(r.score.score, 54.7433, 5e-5);
  EXPECT_NEAR(r.score.bp, 0.917856, 5e-7);
  EXPECT_EQ(r.score.hyp_len, 35);
  EXPECT_EQ(r.score.ref_len, 38);
  EXPECT_NEAR(r.score.precisions[1], 67.7419, 5e-5);
  BleuOptions lc;
  lc.lowercase = true;
  EXPECT_NEAR(corpus_bleu(kEnglishHyps, kEnglishRefs, lc).score.score, 56.8268, 5e-5);
  BleuOptions none;
  none.tokenize = "none";
  EXPECT_NEAR(corpus_bleu(kEnglishHyps, kEnglishRefs, none).score.score, 31.1957, 5e-5);
}

TEST(BleuRegression, UnicodeCorpusTwoReferencesOneEmpty) {
  const auto& hyps = testing::kUnicodeHyps;
  const Streams& refs = testing::kUnicodeRefs;
  const auto r = corpus_bleu(hyps, refs, {});
  // The empty reference adds no n-gram and is never the closest length here, so the score is
  // the one without it (sacrebleu 2.6.0: 41.50310536923283); it still counts in nrefs.
  EXPECT_NEAR(r.score.score, 41.5031, 5e-5);
  EXPECT_NE(r.signature.find("nrefs:2|"), std::string::npos);
  BleuOptions none;
  none.tokenize = "none";
  EXPECT_NEAR(corpus_bleu(hyps, refs, none).score.score, 32.6497, 5e-5);
}

}  // namespace
}  // namespace nmt::eval
