// TER against sacreBLEU 2.x: hand-worked edit counts (identity, a block shift, substitutions,
// empty references and hypotheses, best reference and average length over several references),
// the Tercom options, signatures, and the shift search's limits. Every value was worked out by
// hand from the algorithm (ter_shift.h) and checked once against sacrebleu 2.6.0's
// TER(...).corpus_score; the comments give the arithmetic.

#include <gtest/gtest.h>

#include "eval/metrics/ter.h"
#include "eval/metrics/ter_shift.h"

namespace nmt::eval {
namespace {

double ter_of(const std::string& hyp, const std::vector<std::string>& refs, TerOptions o = {}) {
  std::vector<std::vector<std::string>> streams;
  for (const auto& r : refs) streams.push_back({r});
  return corpus_ter({hyp}, streams, o).score.score;
}

TEST(Ter, IdentityIsZero) {
  EXPECT_EQ(ter_of("a b c d", {"a b c d"}), 0.0);
}

TEST(Ter, OneBlockShiftIsOneEdit) {
  // "c d a b" -> "a b c d": moving the block "a b" (or "c d") is one edit; 1/4.
  EXPECT_DOUBLE_EQ(ter_of("c d a b", {"a b c d"}), 25.0);
  // Swapping "mat" and "cat" takes two edits with or without shifts (two substitutions): 2/6.
  EXPECT_NEAR(ter_of("the cat sat on the mat", {"the mat sat on the cat"}), 100.0 / 3, 1e-9);
}

TEST(Ter, ShiftsThenEditsAtWordLevel) {
  const std::vector<int> hyp{1, 2, 3, 4}, ref{3, 4, 1, 2};
  const TerEdits e = translation_edit_rate(hyp, ref);
  EXPECT_EQ(e.edits, 1);
  EXPECT_EQ(e.ref_length, 4);
  // Substitutions only: no word matches, so no shift is tried.
  EXPECT_EQ(translation_edit_rate({1, 2, 3}, {4, 5, 6}).edits, 3);
  // Insertions: every reference word for an empty hypothesis.
  EXPECT_EQ(translation_edit_rate({}, {1, 2, 3}).edits, 3);
}

TEST(Ter, EmptyReferencesAndHypotheses) {
  // Empty reference: one edit per hypothesis word and no length, hence 100.
  EXPECT_DOUBLE_EQ(ter_of("a b", {""}), 100.0);
  const auto both = corpus_ter({""}, {{""}}, {});
  EXPECT_EQ(both.score.score, 0.0);
  // An empty hypothesis against 4 words: 4 insertions / 4.
  EXPECT_DOUBLE_EQ(ter_of("", {"a x b c"}), 100.0);
  // Corpus: 0 + 2 edits over 0 + 0 reference words -> 100.
  EXPECT_DOUBLE_EQ(corpus_ter({"", "x y"}, {{"", ""}}, {}).score.score, 100.0);
}

TEST(Ter, BestReferenceAndAverageLength) {
  // 1 edit against "a b x d e" (5 words), 2 against "a b c" (3 words): edits 1, length 4.
  const auto stats = ter_segment_stats("a b c d e", {"a b x d e", "a b c"}, {});
  EXPECT_EQ(stats[0], 1.0);
  EXPECT_EQ(stats[1], 4.0);
  EXPECT_DOUBLE_EQ(ter_of("a b c d e", {"a b x d e", "a b c"}), 25.0);
}

TEST(Ter, CaseAndNormalizationOptions) {
  EXPECT_EQ(ter_of("The Cat", {"the cat"}), 0.0);  // Tercom lowercases by default
  TerOptions cased;
  cased.case_sensitive = true;
  EXPECT_DOUBLE_EQ(ter_of("The Cat", {"the cat"}, cased), 100.0);
  // Without normalization "cat." is one word: a substitution and an insertion over 3 words;
  // normalized, the period is split off and nothing is left to edit.
  EXPECT_NEAR(ter_of("the cat.", {"the cat ."}), 200.0 / 3, 1e-9);
  TerOptions norm;
  norm.normalized = true;
  EXPECT_EQ(ter_of("the cat.", {"the cat ."}, norm), 0.0);
  TerOptions no_punct;
  no_punct.no_punct = true;
  EXPECT_EQ(ter_of("the, cat!", {"the cat"}, no_punct), 0.0);
}

TEST(Ter, CorpusSumsEditsAndLengths) {
  // (1 + 0) edits over (4 + 2) words.
  const auto r = corpus_ter({"c d a b", "x y"}, {{"a b c d", "x y"}}, {});
  EXPECT_NEAR(r.score.score, 100.0 / 6, 1e-9);
  EXPECT_EQ(r.score.num_edits, 1.0);
  EXPECT_EQ(r.score.ref_length, 6.0);
}

TEST(Ter, Signatures) {
  EXPECT_EQ(ter_signature({}, "1"),
            "nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:nmt-bleu-2.4.0");
  TerOptions all{true, true, true, true};
  EXPECT_EQ(ter_signature_fields(all, "2").format(true),
            "#:2|c:mixed|t:tercom|nr:yes|pn:no|as:yes|v:nmt-bleu-2.4.0");
}

TEST(Ter, LongSegmentsStayWithinTheCandidateLimit) {
  // 300 words, rotated: many candidate shifts; the search must stop (<= 1000 candidates) and
  // never exceed the plain edit distance (at most 2 * 100 edits for a 100-word rotation).
  std::vector<int> ref(300), hyp(300);
  for (int i = 0; i < 300; ++i) ref[static_cast<std::size_t>(i)] = i % 37;
  for (int i = 0; i < 300; ++i)
    hyp[static_cast<std::size_t>(i)] = ref[static_cast<std::size_t>((i + 100) % 300)];
  const TerEdits e = translation_edit_rate(hyp, ref);
  EXPECT_GT(e.edits, 0);
  EXPECT_LE(e.edits, 200);
}

}  // namespace
}  // namespace nmt::eval
