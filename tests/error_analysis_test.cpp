// Error analysis (eval/analysis/error_analysis.h and its parts): sentence BLEU and chrF against
// values sacreBLEU 2.4's sentence_score gives, the detectors on planted errors, and the whole
// analysis on a small test set with a planted worst sentence, repetition, omission and copy: what
// is flagged, buckets that add up, corpus figures equal to corpus_bleu/corpus_chrf, determinism
// across thread counts, a report whose JSON parses, whose SVG is well-formed and whose Markdown
// tables survive '|' and line breaks in the data, and input files whose every problem names file
// and line.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <zlib.h>

#include "eval/analysis/analysis_chart.h"
#include "eval/analysis/analysis_input.h"
#include "eval/analysis/analysis_report.h"
#include "eval/analysis/analysis_scores.h"
#include "eval/analysis/error_analysis.h"

namespace nmt::eval::analysis {
namespace {

double bleu_of(const std::string& hyp, const std::string& ref) {
  return score_sentence(hyp, ref, BleuOptions{}, ChrfOptions{}).bleu;
}
double chrf_of(const std::string& hyp, const std::string& ref) {
  return score_sentence(hyp, ref, BleuOptions{}, ChrfOptions{}).chrf;
}

// ---- Sentence scores ------------------------------------------------------------------------

// Values printed by sacrebleu 2.4.0: BLEU(effective_order=True).sentence_score and
// CHRF().sentence_score.
TEST(AnalysisSentenceScores, MatchSacreBleuSentenceScore) {
  EXPECT_NEAR(bleu_of("The cat sat", "The cat sat on the mat"), 36.78794411714425, 1e-9);
  EXPECT_NEAR(bleu_of("hello", "hello world"), 36.78794411714425, 1e-9);
  EXPECT_NEAR(bleu_of("a man in a red shirt", "a man in a blue shirt"), 53.7284965911771, 1e-9);
  EXPECT_NEAR(bleu_of("the the the the cat sat on a mat .", "the cat sat on the mat ."),
              32.46679154750989, 1e-9);
  EXPECT_EQ(bleu_of("", "x y"), 0.0);
  EXPECT_EQ(bleu_of("x", "y"), 0.0);
  EXPECT_NEAR(chrf_of("The cat sat", "The cat sat on the mat"), 49.59348409966008, 1e-9);
  EXPECT_NEAR(chrf_of("a man in a red shirt", "a man in a blue shirt"), 51.1854495705509, 1e-9);
  EXPECT_NEAR(chrf_of("the the the the cat sat on a mat .", "the cat sat on the mat ."),
              64.22560173020577, 1e-9);
}

TEST(AnalysisSentenceScores, EffectiveOrderIsCorpusBleuWhenEveryOrderIsPresent) {
  const BleuOptions options;
  const auto stats = bleu_segment_stats("a man rides a red bike down the street",
                                        {"a man rides a bike down a street"}, options);
  EXPECT_DOUBLE_EQ(effective_order_bleu(stats, options), bleu_from_stats(stats, options).score);
  BleuOptions floor;
  floor.smooth = "floor";
  EXPECT_THROW(effective_order_bleu(stats, floor), std::invalid_argument);
}

// ---- Detectors ------------------------------------------------------------------------------

std::vector<std::string> toks(const std::string& s) {
  return tokens_13a(s);
}

TEST(AnalysisDetectors, FindsBackToBackRepeatsOfWordsAndPhrases) {
  const DetectorOptions o;
  auto rep = find_repetition(toks("a dog dog dog runs"), toks("a dog runs"), o);
  ASSERT_TRUE(rep);
  EXPECT_EQ(rep->ngram, "dog");
  EXPECT_EQ(rep->order, 1);
  EXPECT_EQ(rep->count, 3);
  EXPECT_TRUE(rep->consecutive);
  EXPECT_EQ(rep->position, 1);
  rep = find_repetition(toks("a man in a red in a red shirt"), toks("a man in a red shirt"), o);
  ASSERT_TRUE(rep);
  EXPECT_EQ(rep->ngram, "in a red");
  EXPECT_EQ(rep->count, 2);
}

TEST(AnalysisDetectors, FindsARecurringFourGramButNotWhatTheReferenceHolds) {
  const DetectorOptions o;
  const auto rep = find_repetition(toks("a man in a red shirt and a man in a red hat"),
                                   toks("a man in a red shirt and a hat"), o);
  ASSERT_TRUE(rep);
  EXPECT_FALSE(rep->consecutive);
  EXPECT_EQ(rep->ngram, "a man in a");
  EXPECT_EQ(rep->count, 2);
  // The reference doubles the word too, and punctuation runs are not repetitions.
  EXPECT_FALSE(find_repetition(toks("he had had enough"), toks("he had had enough too"), o));
  EXPECT_FALSE(find_repetition(toks("wait . . . now"), toks("wait now"), o));
  EXPECT_FALSE(find_repetition(toks("a man in a red shirt"), toks("a man"), o));
}

TEST(AnalysisDetectors, OmissionNeedsShortAgainstReferenceAndSource) {
  const DetectorOptions o;
  EXPECT_TRUE(is_omission(2, 10, 9, o));
  EXPECT_FALSE(is_omission(2, 10, 3, o));  // the source is short too: the reference is wordy
  EXPECT_FALSE(is_omission(1, 4, 9, o));   // too short a reference to judge
  EXPECT_FALSE(is_omission(6, 10, 10, o));
}

TEST(AnalysisDetectors, CopyIsMostlySourceWordsWhenTheReferenceIsNot) {
  const DetectorOptions o;
  const auto src = toks("A dog runs on the beach .");
  const double hyp = source_word_fraction(toks("a dog runs on the beach ."), src);
  EXPECT_DOUBLE_EQ(hyp, 1.0);
  const double ref = source_word_fraction(toks("Ein Hund rennt am Strand ."), src);
  EXPECT_LT(ref, 0.5);
  EXPECT_TRUE(is_copy(hyp, 6, ref, o));
  EXPECT_FALSE(is_copy(hyp, 2, ref, o));  // too few words
  EXPECT_FALSE(is_copy(hyp, 6, 1.0, o));  // the reference copies as well (a name)
  EXPECT_DOUBLE_EQ(source_word_fraction(toks(". . ."), src), 0.0);
}

// ---- The whole analysis ---------------------------------------------------------------------

constexpr std::size_t kWorst = 6, kRepeated = 11, kOmitted = 17, kCopied = 23, kDiffer = 3;

// 30 sentences of growing length; the system gets every reference right except the planted lines.
AnalysisInput planted_input() {
  const std::vector<std::string> src_words{"A",     "small", "dog",  "runs", "across", "the",
                                           "green", "field", "near", "old",  "houses", "today"};
  const std::vector<std::string> ref_words{"Ein",   "kleiner", "Hund", "rennt", "über",    "die",
                                           "grüne", "Wiese",   "bei",  "alten", "Häusern", "heute"};
  AnalysisInput input;
  input.source_file = "test.en";
  input.reference_file = "test.de";
  SystemInput good{"good", "good.de", {}}, other{"other", "other.de", {}};
  for (std::size_t i = 0; i < 30; ++i) {
    std::string src, ref;
    const std::size_t words = 3 + i % 10;
    for (std::size_t w = 0; w < words; ++w) {
      src += (w ? " " : "") + src_words[(w + i) % src_words.size()];
      ref += (w ? " " : "") + ref_words[(w + i) % ref_words.size()];
    }
    input.sources.push_back(src + " " + std::to_string(i) + " .");
    input.references.push_back(ref + " " + std::to_string(i) + " .");
    good.hypotheses.push_back(input.references.back());
  }
  good.hypotheses[kWorst] = "zzz qqq xxx vvv yyy jjj zzq qqz";  // no letter of the reference
  good.hypotheses[kRepeated] = "Ein Ein Ein " + input.references[kRepeated];
  good.hypotheses[kOmitted] = "Ein";
  good.hypotheses[kCopied] = input.sources[kCopied];
  input.systems.push_back(good);
  other.hypotheses = good.hypotheses;
  other.hypotheses[kDiffer] = "vvv";
  input.systems.push_back(other);
  return input;
}

AnalysisOptions small_options() {
  AnalysisOptions o;
  o.worst = 5;
  o.differences = 3;
  o.bucket_edges = {5, 8};
  return o;
}

TEST(ErrorAnalysis, FindsThePlantedErrors) {
  const auto input = planted_input();
  const auto a = analyze(input, small_options());
  ASSERT_EQ(a.systems.size(), 2u);
  const auto& s = a.systems[0];
  ASSERT_EQ(s.worst.size(), 5u);
  EXPECT_EQ(s.worst.front(), kWorst);
  EXPECT_EQ(s.sentences[kWorst].chrf, 0.0);
  EXPECT_EQ(s.repetitions, std::vector<std::size_t>{kRepeated});
  EXPECT_EQ(s.sentences[kRepeated].repetition->ngram, "Ein");
  EXPECT_EQ(s.omissions, std::vector<std::size_t>{kOmitted});
  EXPECT_EQ(s.copies, std::vector<std::size_t>{kCopied});
  EXPECT_EQ(s.sentences[0].chrf, 100.0);
  EXPECT_NEAR(s.sentences[0].bleu, 100.0, 1e-9);
  // The two systems differ in one line only; it comes first.
  ASSERT_EQ(a.differences.size(), 1u);
  EXPECT_EQ(a.differences[0].sentences.front(), kDiffer);
}

TEST(ErrorAnalysis, BucketsAddUpAndCorpusFiguresAreNmtBleus) {
  const auto input = planted_input();
  const auto options = small_options();
  const auto a = analyze(input, options);
  ASSERT_EQ(a.buckets.size(), 3u);
  EXPECT_EQ(a.buckets[0].label(), "0-5");
  EXPECT_EQ(a.buckets[2].label(), "9+");
  std::size_t total = 0;
  for (std::size_t b = 0; b < a.buckets.size(); ++b) {
    total += a.buckets[b].sentences;
    EXPECT_EQ(a.systems[0].buckets[b].sentences, a.buckets[b].sentences);
  }
  EXPECT_EQ(total, input.sources.size());
  for (std::size_t i = 0; i < a.sentences; ++i) {
    const int words = a.source_words[i];
    EXPECT_EQ(words, static_cast<int>(3 + i % 10 + 2));  // the words, the number, the period
  }
  const auto& hyps = input.systems[0].hypotheses;
  EXPECT_NEAR(a.systems[0].corpus.bleu,
              corpus_bleu(hyps, {input.references}, options.bleu).score.score, 1e-9);
  EXPECT_NEAR(a.systems[0].corpus.chrf, corpus_chrf(hyps, {input.references}, options.chrf).score,
              1e-9);
}

TEST(ErrorAnalysis, SameResultOnAnyNumberOfThreads) {
  AnalysisInput input = planted_input();
  for (int copy = 0; copy < 6; ++copy) {  // past one block of work per thread
    auto more = planted_input();
    input.sources.insert(input.sources.end(), more.sources.begin(), more.sources.end());
    input.references.insert(input.references.end(), more.references.begin(), more.references.end());
    for (std::size_t k = 0; k < 2; ++k) {
      auto& h = input.systems[k].hypotheses;
      h.insert(h.end(), more.systems[k].hypotheses.begin(), more.systems[k].hypotheses.end());
    }
  }
  auto options = small_options();
  options.threads = 1;
  const auto one = report_json(analyze(input, options), input, options);
  options.threads = 4;
  const auto four = report_json(analyze(input, options), input, options);
  EXPECT_EQ(one["options"], four["options"]);
  EXPECT_EQ(one["systems"], four["systems"]);
}

TEST(ErrorAnalysis, RefusesMismatchedAndEmptyInput) {
  auto input = planted_input();
  input.systems[1].hypotheses.pop_back();
  EXPECT_THROW(analyze(input, {}), std::invalid_argument);
  input = planted_input();
  input.references[4].clear();
  try {
    analyze(input, {});
    FAIL() << "an empty reference was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("line 5"), std::string::npos) << e.what();
  }
  AnalysisOptions bad;
  bad.bucket_edges = {10, 5};
  EXPECT_THROW(analyze(planted_input(), bad), std::invalid_argument);
}

// ---- Reading the files ----------------------------------------------------------------------

class AnalysisInputFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    // One folder per test: CTest may run them at once.
    dir_ = std::filesystem::temp_directory_path() /
           (std::string("error_analysis_test_") +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const auto path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  std::string write_gz(const std::string& name, const std::string& text) {
    const auto path = (dir_ / name).string();
    gzFile gz = gzopen(path.c_str(), "wb");
    gzwrite(gz, text.data(), static_cast<unsigned>(text.size()));
    gzclose(gz);
    return path;
  }
  // The message of the std::runtime_error that reading `files` throws.
  static std::string error_of(const InputFiles& files) {
    try {
      read_analysis_input(files);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "(no error)";
  }
  std::filesystem::path dir_;
};

TEST_F(AnalysisInputFiles, ReadsPlainAndGzippedFiles) {
  const InputFiles files{write_gz("src.en.gz", "a b\nc d\n"),
                         write("ref.de", "A B\nC D\n"),
                         {write("hyp.de", "A B\nC\n")},
                         {}};
  const auto input = read_analysis_input(files);
  EXPECT_EQ(input.sources, (std::vector<std::string>{"a b", "c d"}));
  EXPECT_EQ(input.systems.at(0).hypotheses, (std::vector<std::string>{"A B", "C"}));
  EXPECT_EQ(input.systems[0].name, "hyp.de");
}

TEST_F(AnalysisInputFiles, NamesEveryProblemWithFileAndLine) {
  const auto src = write("src.en", "a\nb\nc\n");
  const auto ref = write("ref.de", "A\nB\nC\n");
  auto message = error_of({src, ref, {write("short.de", "A\nB\n")}, {}});
  EXPECT_NE(message.find("source '" + src + "' has 3 lines"), std::string::npos) << message;
  EXPECT_NE(message.find("short.de' has 2"), std::string::npos) << message;
  message = error_of({src, write("gap.de", "A\n\nC\n"), {ref}, {}});
  EXPECT_NE(message.find("gap.de' line 2 is empty"), std::string::npos) << message;
  message = error_of({src, ref, {write("bad.de", "A\nB\n\xff\n")}, {}});
  EXPECT_NE(message.find("bad.de"), std::string::npos) << message;
  EXPECT_NE(message.find("line 3"), std::string::npos) << message;
  message = error_of({src, ref, {(dir_ / "missing.de").string()}, {}});
  EXPECT_NE(message.find("cannot open hypothesis file"), std::string::npos) << message;
  const auto whole = write("whole.gz", "");
  write_gz("whole.gz", std::string(100000, 'x'));
  std::filesystem::resize_file(whole, std::filesystem::file_size(whole) / 2);
  message = error_of({src, ref, {whole}, {}});
  EXPECT_NE(message.find("truncated"), std::string::npos) << message;
}

TEST(AnalysisSystemNames, DefaultsAreTheFileNamesMadeUnique) {
  EXPECT_EQ(system_names({"", "", {"a/x.de", "b/y.de"}, {}}),
            (std::vector<std::string>{"x.de", "y.de"}));
  EXPECT_EQ(system_names({"", "", {"a/x.de", "b/x.de"}, {}}),
            (std::vector<std::string>{"a/x.de", "b/x.de"}));
  EXPECT_EQ(system_names({"", "", {"x.de", "x.de"}, {}}),
            (std::vector<std::string>{"x.de", "x.de (2)"}));
  EXPECT_THROW(system_names({"", "", {"x.de", "y.de"}, {"only one"}}), std::invalid_argument);
}

// ---- The report -----------------------------------------------------------------------------

TEST(AnalysisReport, MarkdownCellsKeepTablesIntact) {
  EXPECT_EQ(markdown_cell("a|b"), "a\\|b");
  EXPECT_EQ(markdown_cell("one\rtwo\tthree\x1b[31m"), "one two three \\[31m");
  EXPECT_EQ(markdown_cell("<b>*x*</b> & _y_"), "\\<b\\>\\*x\\*\\</b\\> &amp; \\_y\\_");
  EXPECT_EQ(markdown_cell("Häuser und Bäume", 5), "Häuse…");
  EXPECT_EQ(markdown_cell("\xC2\x85"
                          "x"),
            " x");  // C1 control (NEL)
}

// Element tags balance and '&' only starts an entity: enough to catch unescaped text.
void expect_well_formed(const std::string& xml) {
  ASSERT_EQ(xml.rfind("<?xml", 0), 0u);
  std::vector<std::string> open;
  for (std::size_t i = xml.find('<', 1); i != std::string::npos; i = xml.find('<', i + 1)) {
    const auto end = xml.find('>', i);
    ASSERT_NE(end, std::string::npos);
    const auto tag = xml.substr(i + 1, end - i - 1);
    if (tag[0] == '/') {
      ASSERT_FALSE(open.empty()) << tag;
      EXPECT_EQ("/" + open.back(), tag);
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(tag.substr(0, tag.find(' ')));
    }
  }
  EXPECT_TRUE(open.empty());
  for (std::size_t i = xml.find('&'); i != std::string::npos; i = xml.find('&', i + 1)) {
    const auto entity = xml.substr(i, xml.find(';', i) - i + 1);
    EXPECT_TRUE(entity == "&amp;" || entity == "&lt;" || entity == "&gt;" || entity == "&quot;" ||
                entity == "&apos;")
        << entity;
  }
}

TEST(AnalysisReport, WritesParsableJsonWellFormedSvgAndMarkdown) {
  auto input = planted_input();
  input.systems[1].name = "odd <name> & \"quotes\" |\x01";
  input.systems[0].hypotheses[kWorst] =
      "zzz | qqq xxx vvv yyy jjj zzq qqz";  // a pipe in a worst sentence
  const auto options = small_options();
  const auto a = analyze(input, options);
  const auto dir = std::filesystem::temp_directory_path() / "error_analysis_test_report";
  std::filesystem::remove_all(dir);
  const auto files = write_report(dir.string(), a, input, options);

  std::ifstream json_file(files.json);
  const auto json = nlohmann::json::parse(json_file);
  EXPECT_EQ(json["format"], "nmt-analysis");
  EXPECT_EQ(json["sentences"], 30);
  ASSERT_EQ(json["systems"].size(), 2u);
  const auto& good = json["systems"][0];
  EXPECT_EQ(good["sentences"].size(), 30u);
  EXPECT_EQ(good["worst"][0]["line"], kWorst + 1);
  EXPECT_EQ(good["worst"][0]["hypothesis"], input.systems[0].hypotheses[kWorst]);
  EXPECT_EQ(good["repetitions"], nlohmann::json::array({kRepeated + 1}));
  EXPECT_EQ(good["sentences"][kCopied]["copy"], true);
  EXPECT_EQ(good["sentences"][kOmitted]["omission"], true);
  EXPECT_EQ(json["systems"][1]["name"], input.systems[1].name);

  std::ifstream svg_file(files.svg);
  const std::string svg{std::istreambuf_iterator<char>(svg_file), {}};
  expect_well_formed(svg);
  EXPECT_NE(svg.find("odd &lt;name&gt; &amp; &quot;quotes&quot; |\xEF\xBF\xBD"), std::string::npos);
  EXPECT_EQ(svg.find('\x01'), std::string::npos);

  std::ifstream md_file(files.markdown);
  const std::string md{std::istreambuf_iterator<char>(md_file), {}};
  EXPECT_NE(md.find("](analysis.svg)"), std::string::npos);
  const auto row = md.find("| 7 | 0.0 |");  // the worst sentence's row
  ASSERT_NE(row, std::string::npos);
  const auto line = md.substr(row, md.find('\n', row) - row);
  EXPECT_NE(line.find("zzz \\| qqq"), std::string::npos) << line;
  std::size_t bars = 0;  // unescaped pipes: the row's 6 cells take 7
  for (std::size_t i = 0; i < line.size(); ++i)
    bars += line[i] == '|' && (!i || line[i - 1] != '\\');
  EXPECT_EQ(bars, 7u) << line;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace nmt::eval::analysis
