// sacreBLEU's command line (eval/metrics/sacrebleu_cli.h) without a process: argparse's reading of
// the arguments (single-dash words, unique prefixes, a repeated -i keeping its last group), the
// checks of option combinations, and what run_sacrebleu prints for inputs whose scores are known.
// The scores themselves are checked against sacreBLEU in bleu_test, chrf_test and ter_test.

#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/cli.h"
#include "eval/metrics/sacrebleu_cli.h"
#include "tests/test_utils.h"

namespace nmt::eval {
namespace {

using Args = std::vector<std::string>;

// The options of `argv` (argv[0] the program) as nmt-bleu reads them.
SacreBleuArgs parse(const Args& argv) {
  CLI::App app{"sacreBLEU's command line", "nmt-bleu"};
  SacreBleuArgs args;
  add_sacrebleu_options(app, args);
  Args rewritten = argparse_rewrite(argv, app);
  rewritten.erase(rewritten.begin());
  std::reverse(rewritten.begin(), rewritten.end());  // CLI11 takes the vector last word first
  app.parse(rewritten);
  return args;
}

Args rewrite(const Args& argv) {
  CLI::App app{"sacreBLEU's command line", "nmt-bleu"};
  SacreBleuArgs args;
  add_sacrebleu_options(app, args);
  return argparse_rewrite(argv, app);
}

TEST(SacreBleuCli, SingleDashWordsAreOptionsNotBundlesOfLetters) {
  EXPECT_EQ(rewrite({"nmt-bleu", "ref", "-tok", "intl", "-lc", "-sl", "-nr=2", "-cin", "9"}),
            (Args{"nmt-bleu", "ref", "--tokenize", "intl", "--lowercase", "--sentence-level",
                  "--num-refs=2", "--confidence-n", "9"}));
  const SacreBleuArgs args = parse({"nmt-bleu", "ref", "-tok", "intl", "-lc", "-sh", "-w", "3"});
  EXPECT_EQ(args.tokenize.value_or(""), "intl");
  EXPECT_TRUE(args.bleu.lowercase);
  EXPECT_TRUE(args.short_sig);
  EXPECT_EQ(args.width, 3);
  EXPECT_EQ(args.refs, Args{"ref"});
}

TEST(SacreBleuCli, AUniquePrefixNamesItsOptionAndAnAmbiguousOneIsAUsageError) {
  EXPECT_EQ(rewrite({"nmt-bleu", "--smooth-m", "floor", "--chrf-b=3"}),
            (Args{"nmt-bleu", "--smooth-method", "floor", "--chrf-beta=3"}));
  NMT_EXPECT_THROW_WITH(rewrite({"nmt-bleu", "--paired", "r"}), UsageError, "ambiguous option",
                        "--paired-ar", "--paired-bs");
  // After "--" nothing is an option.
  EXPECT_EQ(rewrite({"nmt-bleu", "--", "-tok", "--smooth-m"}),
            (Args{"nmt-bleu", "--", "-tok", "--smooth-m"}));
}

TEST(SacreBleuCli, ARepeatedInputOrMetricsKeepsItsLastGroup) {
  EXPECT_EQ(rewrite({"nmt-bleu", "ref", "-i", "a", "-m", "ter", "-i", "b", "c", "-m", "chrf"}),
            (Args{"nmt-bleu", "ref", "-i", "b", "c", "-m", "chrf"}));
  const SacreBleuArgs args = parse({"nmt-bleu", "r1", "r2", "-i", "a", "-i", "b", "c"});
  EXPECT_EQ(args.refs, (Args{"r1", "r2"}));
  ASSERT_TRUE(args.inputs.has_value());
  EXPECT_EQ(*args.inputs, (Args{"b", "c"}));
}

class SacreBleuRun : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::write_text(ref_, "the cat sat on the mat\nit is raining today\n");
    testing::write_text(same_, "the cat sat on the mat\nit is raining today\n");
    testing::write_text(other_, "the cat sat on a mat\nit is raining today\n");
    testing::write_text(short_, "the cat sat on the mat\n");
  }
  std::string run(const Args& argv, const std::string& stdin_text = "") {
    std::istringstream in(stdin_text);
    std::ostringstream out;
    EXPECT_EQ(run_sacrebleu(parse(argv), in, out), 0);
    return out.str();
  }
  testing::TempDir dir_;
  std::string ref_ = dir_.file("ref.txt"), same_ = dir_.file("same.txt"),
              other_ = dir_.file("other.txt"), short_ = dir_.file("short.txt");
};

TEST_F(SacreBleuRun, ScoreOnlyPrintsTheScoreToTheWidthAsked) {
  EXPECT_EQ(run({"nmt-bleu", ref_, "-i", same_, "-b"}), "100.0\n");
  EXPECT_EQ(run({"nmt-bleu", ref_, "-i", same_, "-b", "-w", "3"}), "100.000\n");
  EXPECT_EQ(run({"nmt-bleu", ref_, "-b"}, "the cat sat on the mat\nit is raining today\n"),
            "100.0\n");
  const double partial = std::stod(run({"nmt-bleu", ref_, "-i", other_, "-b"}));
  EXPECT_GT(partial, 0.0);
  EXPECT_LT(partial, 100.0);
}

TEST_F(SacreBleuRun, TheJsonAnswerNamesTheMetricAndItsSignature) {
  const std::string json = run({"nmt-bleu", ref_, "-i", same_, "-m", "bleu", "chrf"});
  EXPECT_NE(json.find("\"name\": \"BLEU\""), std::string::npos) << json;
  EXPECT_NE(json.find("\"name\": \"chrF2\""), std::string::npos) << json;
  EXPECT_NE(json.find("nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp"), std::string::npos) << json;
}

TEST_F(SacreBleuRun, CombinationsSacreBleuRefusesAreUsageErrors) {
  std::istringstream in;
  std::ostringstream out;
  NMT_EXPECT_THROW_WITH(
      run_sacrebleu(parse({"nmt-bleu", ref_, "-i", same_, "-sl", "-m", "bleu", "chrf"}), in, out),
      UsageError, "Only one metric");
  NMT_EXPECT_THROW_WITH(run_sacrebleu(parse({"nmt-bleu", ref_, "-i", same_, "-pbs"}), in, out),
                        UsageError, "multiple input systems");
  NMT_EXPECT_THROW_WITH(
      run_sacrebleu(parse({"nmt-bleu", ref_, "-i", same_, other_, "-pbs", "-par"}), in, out),
      UsageError, "mutually exclusive");
  NMT_EXPECT_THROW_WITH(run_sacrebleu(parse({"nmt-bleu", "-t", "wmt14", "-i", same_}), in, out),
                        UsageError, "--test-set", "test sets");
  NMT_EXPECT_THROW_WITH(
      run_sacrebleu(parse({"nmt-bleu", ref_, "-i", same_, "-e", "latin-1"}), in, out), UsageError,
      "UTF-8 only");
  EXPECT_EQ(out.str(), "");
}

TEST_F(SacreBleuRun, ASystemOfAnotherLengthThanTheReferencesIsAnErrorNamingBoth) {
  std::istringstream in;
  std::ostringstream out;
  NMT_EXPECT_THROW_WITH(run_sacrebleu(parse({"nmt-bleu", ref_, "-i", short_}), in, out),
                        std::runtime_error, "different lengths", "1 lines", "reference 1 has 2");
  EXPECT_EQ(out.str(), "");
}

}  // namespace
}  // namespace nmt::eval
