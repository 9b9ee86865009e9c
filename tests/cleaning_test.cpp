// Cleaning: every normalisation and every filter, each with its count; nothing disappears
// without one.

#include "preprocess/cleaning.h"

#include "test_utils.h"

namespace nmt::preprocess {
namespace {

SentencePair make(std::string src, std::string tgt) {
  return {std::move(src), std::move(tgt), 0};
}

TEST(Cleaning, RepairsInvalidUtf8WithReplacementCharacter) {
  std::string valid = "Grüße, 世界 😀";
  EXPECT_FALSE(repair_utf8(valid));
  EXPECT_EQ(valid, "Grüße, 世界 😀");
  std::string bad =
      "a\xff"
      "b\xc3";  // stray byte, truncated sequence at the end
  EXPECT_TRUE(repair_utf8(bad));
  EXPECT_EQ(bad,
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD");
  std::string overlong = "\xC0\xAF x \xED\xA0\x80";  // overlong '/', UTF-16 surrogate
  EXPECT_TRUE(repair_utf8(overlong));
  EXPECT_EQ(overlong.find('\xC0'), std::string::npos);
  EXPECT_EQ(overlong.find('\xED'), std::string::npos);
}

TEST(Cleaning, RemovesControlCharactersKeepsNonBreakingSpace) {
  std::string text =
      "a\tb\x01"
      "c\x7F"
      "d\xC2\x85"
      "e\xEF\xBB\xBF"
      "f\xC2\xA0g";
  EXPECT_TRUE(remove_control_chars(text));
  EXPECT_EQ(text, "a bcdef\xC2\xA0g");  // NBSP is whitespace, handled by normalize_whitespace
  std::string clean = "nothing to do";
  EXPECT_FALSE(remove_control_chars(clean));
}

TEST(Cleaning, CollapsesWhitespaceAndCounts) {
  std::string text = "  two   spaces  ";
  EXPECT_TRUE(normalize_whitespace(text));
  EXPECT_EQ(text, "two spaces");
  EXPECT_EQ(count_words(text), 2);
  EXPECT_EQ(count_words(""), 0);
  std::string unicode =
      "120\xC2\xA0"
      "cm\xE3\x80\x80und\xE2\x80\xAF";  // NBSP, ideographic, narrow
  EXPECT_TRUE(normalize_whitespace(unicode));
  EXPECT_EQ(unicode, "120 cm und");
  EXPECT_EQ(count_code_points("Grüße"), 5);
}

TEST(Cleaning, EachFilterCountsItsReason) {
  CleaningOptions options;
  options.max_words = 5;
  options.max_chars = 30;
  options.max_ratio = 2.0;
  options.dedupe = true;
  PairCleaner cleaner(options, /*filter=*/true);
  std::vector<SentencePair> pairs = {
      make("a b c", "x y z"),              // kept
      make("", "x"),                       // empty
      make("   ", "x"),                    // empty after whitespace normalisation
      make(std::string(31, 'a'), "x"),     // too_long_chars
      make("a b c d e f", "u v w x y z"),  // too_many_words
      make("a b c d e", "x y"),            // length_ratio (5/2 > 2)
      make("a b c", "x y z"),              // duplicate of the first
      make("a\tb d", "x y\x01 z"),         // kept, control chars repaired
      make("a\xff b", "x y"),              // kept, invalid UTF-8 repaired
  };
  int kept = 0;
  for (auto& p : pairs) kept += cleaner.apply(p) ? 1 : 0;
  const auto& s = cleaner.stats();
  EXPECT_EQ(kept, 3);
  EXPECT_EQ(s.read, 9);
  EXPECT_EQ(s.kept, 3);
  EXPECT_EQ(s.dropped.at(kDropEmpty), 2);
  EXPECT_EQ(s.dropped.at(kDropTooLongChars), 1);
  EXPECT_EQ(s.dropped.at(kDropTooManyWords), 1);
  EXPECT_EQ(s.dropped.at(kDropLengthRatio), 1);
  EXPECT_EQ(s.dropped.at(kDropDuplicate), 1);
  EXPECT_EQ(s.dropped_total() + s.kept, s.read);
  EXPECT_EQ(s.repaired.at(kRepairControlChars), 1);
  EXPECT_EQ(s.repaired.at(kRepairInvalidUtf8), 1);
  EXPECT_EQ(pairs[7].source, "a b d");
  EXPECT_EQ(pairs[7].target, "x y z");
}

TEST(Cleaning, TooFewWordsAndDisabledRatio) {
  CleaningOptions options;
  options.min_words = 3;
  options.max_ratio = 0;  // disabled
  PairCleaner cleaner(options, true);
  auto short_pair = make("a b", "x y z");
  auto lopsided = make("a b c", "x y z 1 2 3 4 5 6 7 8 9");
  EXPECT_FALSE(cleaner.apply(short_pair));
  EXPECT_TRUE(cleaner.apply(lopsided));
  EXPECT_EQ(cleaner.stats().dropped.at(kDropTooFewWords), 1);
}

TEST(Cleaning, EvalSplitsAreOnlyNormalised) {
  PairCleaner cleaner(CleaningOptions{}, /*filter=*/false);
  auto empty = make("", "");
  auto long_pair = make(std::string(5000, 'a'), "x");
  auto spaced = make(" a  b ", "x");
  EXPECT_TRUE(cleaner.apply(empty));
  EXPECT_TRUE(cleaner.apply(long_pair));
  EXPECT_TRUE(cleaner.apply(spaced));
  EXPECT_EQ(spaced.source, "a b");
  EXPECT_EQ(cleaner.stats().kept, 3);
  EXPECT_TRUE(cleaner.stats().dropped.empty());
  EXPECT_EQ(cleaner.stats().repaired.at(kRepairWhitespace), 1);
}

TEST(Cleaning, OptionsAreValidated) {
  CleaningOptions options;
  options.max_ratio = 0.5;
  EXPECT_THROW(options.validate(), std::invalid_argument);
  options = CleaningOptions{};
  options.max_words = 0;
  EXPECT_THROW(PairCleaner(options, true), std::invalid_argument);
}

}  // namespace
}  // namespace nmt::preprocess
