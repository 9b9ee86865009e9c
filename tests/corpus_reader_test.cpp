// Corpus readers: plain and gzipped text pairs read alike, line terminators, lockstep checks,
// WMT SGML pairing by (docid, seg id) and its <seg> structure (also as the recipe's Python
// converter reads it), strict TSV rows, format detection, progress, and clear errors for missing,
// unequal, mismatched or corrupt input. Plus the real Multi30k val set.

#include "preprocess/corpus_reader.h"

#include <sys/wait.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "test_utils.h"
#include "tests/multi30k.h"

namespace nmt::preprocess {
namespace {

using testing::read_text;
using testing::TempDir;
using testing::write_text;

void write_gzip(const std::string& path, const std::string& text) {
  gzFile file = gzopen(path.c_str(), "wb");
  ASSERT_NE(file, nullptr) << path;
  ASSERT_EQ(gzwrite(file, text.data(), static_cast<unsigned>(text.size())),
            static_cast<int>(text.size()));
  ASSERT_EQ(gzclose(file), Z_OK);
}

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::vector<SentencePair> read_all(const CorpusSpec& spec) {
  auto reader = open_corpus(spec);
  std::vector<SentencePair> pairs;
  SentencePair pair;
  while (reader->next(pair)) pairs.push_back(pair);
  EXPECT_FALSE(reader->next(pair)) << "an exhausted reader stays exhausted";
  return pairs;
}

std::vector<std::string> read_lines(const std::string& path) {
  LineSource source(path);
  std::vector<std::string> lines;
  std::string line;
  while (source.next(line)) {
    lines.push_back(line);
    EXPECT_EQ(source.line_number(), static_cast<std::int64_t>(lines.size()));
  }
  return lines;
}

CorpusSpec text_spec(const std::string& source, const std::string& target) {
  CorpusSpec spec;
  spec.source = source;
  spec.target = target;
  return spec;
}

// Distinct sentences, enough to span several zlib and reader buffers when asked.
std::string numbered_lines(const std::string& prefix, int count) {
  std::string text;
  for (int i = 1; i <= count; ++i) text += prefix + " sentence number " + std::to_string(i) + "\n";
  return text;
}

TEST(CorpusFormat, ParseAndName) {
  for (auto format :
       {CorpusFormat::kAuto, CorpusFormat::kText, CorpusFormat::kSgml, CorpusFormat::kTsv}) {
    EXPECT_EQ(parse_corpus_format(format_name(format)), format);
  }
  EXPECT_EQ(format_name(CorpusFormat::kSgml), "sgml");
  NMT_EXPECT_THROW_WITH(parse_corpus_format("xml"), std::invalid_argument, "xml", "tsv");
}

TEST(CorpusFormat, DetectFromFileName) {
  EXPECT_EQ(detect_corpus_format("data/train.en"), CorpusFormat::kText);
  EXPECT_EQ(detect_corpus_format("data/train.de.gz"), CorpusFormat::kText);
  EXPECT_EQ(detect_corpus_format("newstest2014-deen-src.en.sgm"), CorpusFormat::kSgml);
  EXPECT_EQ(detect_corpus_format("newstest2014-deen-src.en.sgm.gz"), CorpusFormat::kSgml);
  EXPECT_EQ(detect_corpus_format("dev/newstest2009.SGML"), CorpusFormat::kSgml);
  EXPECT_EQ(detect_corpus_format("news-commentary-v14.de-en.tsv"), CorpusFormat::kTsv);
  EXPECT_EQ(detect_corpus_format("news-commentary-v14.de-en.tsv.gz"), CorpusFormat::kTsv);
  EXPECT_EQ(detect_corpus_format("sgm.d/file.gz"), CorpusFormat::kText);
}

TEST(CorpusSpec, ResolvedFormatAndDescribe) {
  CorpusSpec text = text_spec("a.en", "a.de");
  EXPECT_EQ(text.resolved_format(), CorpusFormat::kText);
  EXPECT_EQ(text.describe(), "a.en + a.de (text)");
  CorpusSpec tsv;
  tsv.source = "nc.tsv";
  EXPECT_EQ(tsv.describe(), "nc.tsv [0,1] (tsv)");
  CorpusSpec forced = text_spec("test.src", "test.ref");
  forced.format = CorpusFormat::kSgml;
  EXPECT_EQ(forced.resolved_format(), CorpusFormat::kSgml);
  EXPECT_EQ(forced.describe(), "test.src + test.ref (sgml)");
}

TEST(LineSource, CrLfEmptyLinesAndMissingFinalNewline) {
  TempDir dir;
  write_text(dir.file("a.txt"), "first\r\n\r\nthird line\n\nlast without newline\r");
  EXPECT_EQ(read_lines(dir.file("a.txt")),
            (std::vector<std::string>{"first", "", "third line", "", "last without newline"}));
  write_text(dir.file("empty.txt"), "");
  EXPECT_TRUE(read_lines(dir.file("empty.txt")).empty());
  write_text(dir.file("newline.txt"), "\n");
  EXPECT_EQ(read_lines(dir.file("newline.txt")), std::vector<std::string>{""});
}

// Lines cross the 1 MiB buffer boundary (including a "\r\n" split across it) and one line is
// longer than the buffer.
TEST(LineSource, LinesSpanningBuffers) {
  TempDir dir;
  std::vector<std::string> expected;
  std::string text;
  for (int i = 0; text.size() < (3u << 20); ++i) {
    expected.push_back(std::string(static_cast<std::size_t>(1 + i % 997), 'a' + i % 26));
    text += expected.back() + (i % 2 ? "\r\n" : "\n");
  }
  expected.push_back(std::string(1500000, 'z'));
  text += expected.back();
  write_text(dir.file("big.txt"), text);
  write_gzip(dir.file("big.gz"), text);
  EXPECT_EQ(read_lines(dir.file("big.txt")), expected);
  EXPECT_EQ(read_lines(dir.file("big.gz")), expected);
}

// The content decides, not the name: gzip named .txt is decompressed, text named .gz is not.
TEST(LineSource, DetectsGzipByMagicBytes) {
  TempDir dir;
  write_gzip(dir.file("really_gzip.txt"), "eins\nzwei\n");
  write_text(dir.file("really_text.gz"), "one\ntwo\n");
  EXPECT_EQ(read_lines(dir.file("really_gzip.txt")), (std::vector<std::string>{"eins", "zwei"}));
  EXPECT_EQ(read_lines(dir.file("really_text.gz")), (std::vector<std::string>{"one", "two"}));
}

TEST(LineSource, CorruptOrTruncatedGzipIsCorpusError) {
  TempDir dir;
  std::string text;
  for (int i = 0; i < 20000; ++i) text += "line " + std::to_string(i * 7919 % 100003) + "\n";
  write_gzip(dir.file("good.gz"), text);
  const std::string bytes = read_bytes(dir.file("good.gz"));
  ASSERT_GT(bytes.size(), 1000u);
  write_text(dir.file("truncated.gz"), bytes.substr(0, bytes.size() / 2));
  std::string flipped = bytes;
  for (std::size_t i = bytes.size() / 3; i < bytes.size() / 3 + 64; ++i) flipped[i] ^= 0x5a;
  write_text(dir.file("flipped.gz"), flipped);
  write_text(dir.file("header_only.gz"), std::string("\x1f\x8b", 2));
  for (const char* name : {"truncated.gz", "flipped.gz", "header_only.gz"}) {
    NMT_EXPECT_THROW_WITH(read_lines(dir.file(name)), CorpusError, name, "gzip");
  }
}

TEST(TextPairs, PlainAndGzipGiveIdenticalPairs) {
  TempDir dir;
  const std::string en = "A dog runs.\r\nTwo men & a cat\n\nThe end";
  const std::string de = "Ein Hund läuft.\nZwei Männer & eine Katze\n\nDas Ende\n";
  write_text(dir.file("t.en"), en);
  write_text(dir.file("t.de"), de);
  write_gzip(dir.file("t.en.gz"), en);
  write_gzip(dir.file("t.de.gz"), de);
  const auto plain = read_all(text_spec(dir.file("t.en"), dir.file("t.de")));
  const auto gzip = read_all(text_spec(dir.file("t.en.gz"), dir.file("t.de.gz")));
  const auto mixed = read_all(text_spec(dir.file("t.en.gz"), dir.file("t.de")));
  ASSERT_EQ(plain.size(), 4u);
  EXPECT_EQ(plain[0].source, "A dog runs.");
  EXPECT_EQ(plain[0].target, "Ein Hund läuft.");
  EXPECT_EQ(plain[2].source, "");
  EXPECT_EQ(plain[3].source, "The end");
  EXPECT_EQ(plain[3].target, "Das Ende");
  for (const auto* other : {&gzip, &mixed}) {
    ASSERT_EQ(other->size(), plain.size());
    for (std::size_t i = 0; i < plain.size(); ++i) {
      EXPECT_EQ((*other)[i].source, plain[i].source);
      EXPECT_EQ((*other)[i].target, plain[i].target);
      EXPECT_EQ((*other)[i].line, static_cast<std::int64_t>(i + 1));
    }
  }
}

TEST(TextPairs, UnequalLineCountsNameBothFilesAndCounts) {
  TempDir dir;
  write_text(dir.file("train.en"), numbered_lines("en", 5));
  write_text(dir.file("train.de"), numbered_lines("de", 3));
  write_gzip(dir.file("train.de.gz"), numbered_lines("de", 3));
  NMT_EXPECT_THROW_WITH(read_all(text_spec(dir.file("train.en"), dir.file("train.de"))),
                        CorpusError, "train.en has 5 lines", "train.de has 3 lines");
  NMT_EXPECT_THROW_WITH(read_all(text_spec(dir.file("train.de.gz"), dir.file("train.en"))),
                        CorpusError, "train.de.gz has 3 lines", "train.en has 5 lines");
}

TEST(TextPairs, ProgressReachesOneAtTheEnd) {
  TempDir dir;
  write_text(dir.file("p.en"), numbered_lines("en", 50000));
  write_gzip(dir.file("p.de.gz"), numbered_lines("de", 50000));
  auto reader = open_corpus(text_spec(dir.file("p.en"), dir.file("p.de.gz")));
  EXPECT_EQ(reader->total_bytes(),
            static_cast<std::int64_t>(std::filesystem::file_size(dir.file("p.en")) +
                                      std::filesystem::file_size(dir.file("p.de.gz"))));
  EXPECT_DOUBLE_EQ(reader->progress(), 0.0);
  SentencePair pair;
  double last = 0.0;
  std::int64_t pairs = 0;
  while (reader->next(pair)) {
    const double now = reader->progress();
    EXPECT_GE(now, last);
    EXPECT_LE(now, 1.0);
    if (++pairs == 25000) {
      EXPECT_LT(now, 0.9);  // not simply 1.0 as soon as a buffer is read
    }
    last = now;
  }
  EXPECT_EQ(pairs, 50000);
  EXPECT_DOUBLE_EQ(reader->progress(), 1.0);
}

// Two documents (seg ids restart), an uppercase SEG, entities, attributes in any order and
// quoting, and non-seg lines in between.
TEST(Sgml, TwoDocumentsEntitiesAndUppercaseSeg) {
  TempDir dir;
  write_text(
      dir.file("test-src.en.sgm"),
      "<srcset setid=\"newstest\" srclang=\"any\">\n"
      "<doc sysid=\"ref\" docid=\"d1\" genre=\"news\" origlang=\"en\">\n"
      "<p>\n"
      "<seg id=\"1\"> Tom &amp; Jerry say &quot;hi&quot; </seg>\n"
      "<seg id=\"2\">1 &lt; 2 &gt; 0 &apos;ok&apos; &#233;t&#xE9; &#x1F600; &foo; a&b</seg>\n"
      "</p>\n"
      "</doc>\n"
      "<doc docid='d2' sysid='ref'>\n"
      "<SEG ID=1>Second document</SEG>\n"
      "</doc>\n"
      "</srcset>\n");
  write_text(dir.file("test-ref.de.sgm"),
             "<refset setid=\"newstest\" srclang=\"any\" trglang=\"de\">\r\n"
             "<doc docid=\"d1\" sysid=\"ref\">\r\n"
             "<seg id=\"1\">Tom &amp;amp; Jerry</seg>\r\n"
             "<seg id='2'>Zwei</seg>\r\n"
             "</doc>\r\n"
             "<DOC sysid=\"ref\" docid=\"d2\">\r\n"
             "<seg  id = \"1\" >Zweites Dokument</seg>\r\n"
             "</DOC>\r\n"
             "</refset>\r\n");
  const auto pairs = read_all(text_spec(dir.file("test-src.en.sgm"), dir.file("test-ref.de.sgm")));
  ASSERT_EQ(pairs.size(), 3u);
  EXPECT_EQ(pairs[0].source, "Tom & Jerry say \"hi\"");
  EXPECT_EQ(pairs[0].target, "Tom &amp; Jerry");
  EXPECT_EQ(pairs[1].source, "1 < 2 > 0 'ok' \xC3\xA9t\xC3\xA9 \xF0\x9F\x98\x80 &foo; a&b");
  EXPECT_EQ(pairs[1].target, "Zwei");
  EXPECT_EQ(pairs[2].source, "Second document");
  EXPECT_EQ(pairs[2].target, "Zweites Dokument");
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    EXPECT_EQ(pairs[i].line, static_cast<std::int64_t>(i + 1));
  }
}

TEST(Sgml, MismatchedIdsNameBothFilesLinesAndIds) {
  TempDir dir;
  write_text(dir.file("src.sgm"),
             "<doc docid=\"a\">\n<seg id=\"1\">x</seg>\n<seg id=\"2\">y</seg>\n</doc>\n");
  write_text(dir.file("ref.sgm"),
             "<doc docid=\"a\">\n<seg id=\"1\">x</seg>\n\n<seg id=\"3\">y</seg>\n</doc>\n");
  write_text(dir.file("other_doc.sgm"),
             "<doc docid=\"b\">\n<seg id=\"1\">x</seg>\n<seg id=\"2\">y</seg>\n</doc>\n");
  NMT_EXPECT_THROW_WITH(read_all(text_spec(dir.file("src.sgm"), dir.file("ref.sgm"))), CorpusError,
                        "src.sgm:3", "ref.sgm:4", "'2'", "'3'");
  NMT_EXPECT_THROW_WITH(read_all(text_spec(dir.file("src.sgm"), dir.file("other_doc.sgm"))),
                        CorpusError, "src.sgm:2", "other_doc.sgm:2", "'a'", "'b'");
}

TEST(Sgml, UnequalSegmentCounts) {
  TempDir dir;
  write_text(dir.file("src.sgm"),
             "<doc docid=\"a\">\n<seg id=\"1\">x</seg>\n<seg id=\"2\">y</seg>\n"
             "<seg id=\"3\">z</seg>\n</doc>\n");
  write_gzip(dir.file("ref.sgm.gz"), "<doc docid=\"a\">\n<seg id=\"1\">x</seg>\n</doc>\n");
  NMT_EXPECT_THROW_WITH(read_all(text_spec(dir.file("src.sgm"), dir.file("ref.sgm.gz"))),
                        CorpusError, "src.sgm has 3 segments", "ref.sgm.gz has 1 segments");
}

// SGML files whose <seg> structure is broken, each with the "file:line:" its error must name and
// a phrase of the message. Lines 1 and 2 are <srcset> and <doc>.
struct BrokenSgml {
  std::string name;
  std::string text;
  std::string where;
  std::string what;
};

std::vector<BrokenSgml> broken_sgml_files() {
  const std::string head = "<srcset setid=\"t\" srclang=\"any\">\n<doc docid=\"d\">\n";
  return {
      {"nested_one_line.sgm",
       head + "<seg id=\"1\">a</seg>\n<seg id=\"2\">b <seg id=\"3\">c</seg> d</seg>\n</doc>\n",
       "nested_one_line.sgm:4:", "<seg> opened inside another <seg> (opened on line 4)"},
      {"nested_across_lines.sgm", head + "<seg id=\"1\">a\n<SEG id=\"2\">b</seg>\n</doc>\n",
       "nested_across_lines.sgm:4:", "<seg> opened inside another <seg> (opened on line 3)"},
      {"stray_close_same_line.sgm", head + "<seg id=\"1\">a</seg> </seg>\n</doc>\n",
       "stray_close_same_line.sgm:3:", "</seg> without an open <seg>"},
      {"stray_close_own_line.sgm", head + "<seg id=\"1\">a</seg>\n</SEG >\n</doc>\n",
       "stray_close_own_line.sgm:4:", "</seg> without an open <seg>"},
      {"unclosed_at_end.sgm", head + "<seg id=\"1\">a</seg>\n<seg id=\"2\">b\n</doc>\n</srcset>\n",
       "unclosed_at_end.sgm:4:", "<seg> not closed by the end of the file"},
      {"spans_lines.sgm", head + "<seg id=\"1\">a\nb</seg>\n</doc>\n",
       "spans_lines.sgm:3:", "closes on line 4"},
  };
}

// The well-formed file beside each broken one: segments 1 to 3 of the same document.
const char* const kGoodSgml =
    "<refset setid=\"t\" srclang=\"any\" trglang=\"de\">\n<doc docid=\"d\">\n"
    "<seg id=\"1\">eins</seg>\n<seg id=\"2\">zwei</seg>\n<seg id=\"3\">drei</seg>\n</doc>\n"
    "</refset>\n";

// Nested, stray, unclosed and multi-line segments are errors naming the file and the line, on
// either side of the pair, also where both sides agree (a file paired with itself).
TEST(Sgml, BrokenSegmentStructureNamesFileAndLine) {
  TempDir dir;
  write_text(dir.file("good.sgm"), kGoodSgml);
  for (const auto& broken : broken_sgml_files()) {
    SCOPED_TRACE(broken.name);
    write_text(dir.file(broken.name), broken.text);
    NMT_EXPECT_THROW_WITH(read_all(text_spec(dir.file(broken.name), dir.file("good.sgm"))),
                          CorpusError, broken.where, broken.what);
    NMT_EXPECT_THROW_WITH(read_all(text_spec(dir.file("good.sgm"), dir.file(broken.name))),
                          CorpusError, broken.where, broken.what);
    NMT_EXPECT_THROW_WITH(read_all(text_spec(dir.file(broken.name), dir.file(broken.name))),
                          CorpusError, broken.where, broken.what);
  }
}

// jobs/wmt14/sgm2text.py (the recipe's converter of the test sets) refuses the same files with the
// same "file:line:", writing no text; a well-formed file converts.
TEST(Sgml, RecipeConverterRefusesTheSameFiles) {
  const std::string python = "/usr/bin/python3";
  if (!std::filesystem::exists(python)) GTEST_SKIP() << "no " << python;
  const std::string script = std::string(NMT_SOURCE_DIR) + "/jobs/wmt14/sgm2text.py";
  TempDir dir;
  const auto convert = [&](const std::string& name) {
    const std::string command = python + " '" + script + "' '" + dir.file(name) + "' > '" +
                                dir.file("out.txt") + "' 2> '" + dir.file("err.txt") + "'";
    const int status = std::system(command.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  write_text(dir.file("good.sgm"), kGoodSgml);
  ASSERT_EQ(convert("good.sgm"), 0) << read_text(dir.file("err.txt"));
  EXPECT_EQ(read_text(dir.file("out.txt")), "eins\nzwei\ndrei\n");
  for (const auto& broken : broken_sgml_files()) {
    SCOPED_TRACE(broken.name);
    write_text(dir.file(broken.name), broken.text);
    EXPECT_EQ(convert(broken.name), 1);
    const std::string err = read_text(dir.file("err.txt"));
    EXPECT_NE(err.find(broken.where), std::string::npos) << err;
    EXPECT_NE(err.find(broken.what), std::string::npos) << err;
    EXPECT_EQ(read_text(dir.file("out.txt")), "") << "text written for a broken file";
  }
}

TEST(Tsv, CustomColumns) {
  TempDir dir;
  write_text(dir.file("nc.tsv"), "id1\tHallo Welt\tHello world\r\nid2\t\tEmpty German\nid3\tc\td");
  CorpusSpec spec;
  spec.source = dir.file("nc.tsv");
  spec.tsv_source_column = 2;
  spec.tsv_target_column = 1;
  const auto pairs = read_all(spec);
  ASSERT_EQ(pairs.size(), 3u);
  EXPECT_EQ(pairs[0].source, "Hello world");
  EXPECT_EQ(pairs[0].target, "Hallo Welt");
  EXPECT_EQ(pairs[1].source, "Empty German");
  EXPECT_EQ(pairs[1].target, "");
  EXPECT_EQ(pairs[2].source, "d");
  EXPECT_EQ(pairs[2].line, 3);
  spec.target = spec.source;  // naming the same file twice is accepted
  EXPECT_EQ(read_all(spec).size(), 3u);
}

TEST(Tsv, WrongFieldCountNamesFileAndLine) {
  TempDir dir;
  write_text(dir.file("short.tsv"), "a\tb\nc\n");
  write_text(dir.file("extra.tsv"), "a\tb\nc\td\te\n");
  write_text(dir.file("empty_line.tsv"), "a\tb\n\nc\td\n");
  write_text(dir.file("narrow.tsv"), "a\tb\nc\td\n");
  auto spec_for = [&](const std::string& name) {
    CorpusSpec spec;
    spec.source = dir.file(name);
    return spec;
  };
  NMT_EXPECT_THROW_WITH(read_all(spec_for("short.tsv")), CorpusError, "short.tsv:2", "1 ", "2");
  NMT_EXPECT_THROW_WITH(read_all(spec_for("extra.tsv")), CorpusError, "extra.tsv:2", "3 ", "2");
  NMT_EXPECT_THROW_WITH(read_all(spec_for("empty_line.tsv")), CorpusError, "empty_line.tsv:2");
  CorpusSpec wide = spec_for("narrow.tsv");
  wide.tsv_target_column = 3;
  NMT_EXPECT_THROW_WITH(read_all(wide), CorpusError, "narrow.tsv:1", "2 ", "at least 4");
}

TEST(OpenCorpus, MissingFileIsCorpusErrorNamingIt) {
  TempDir dir;
  write_text(dir.file("here.en"), "x\n");
  NMT_EXPECT_THROW_WITH(open_corpus(text_spec(dir.file("here.en"), dir.file("gone.de"))),
                        CorpusError, "cannot open", "gone.de", "No such file or directory");
  NMT_EXPECT_THROW_WITH(open_corpus(text_spec(dir.file("gone.sgm"), dir.file("here.en"))),
                        CorpusError, "gone.sgm");
  NMT_EXPECT_THROW_WITH(open_corpus(text_spec(dir.path().string(), dir.file("here.en"))),
                        CorpusError, "cannot open", "directory");
}

TEST(OpenCorpus, RejectsInconsistentSpecs) {
  TempDir dir;
  write_text(dir.file("a.tsv"), "x\ty\n");
  write_text(dir.file("a.en"), "x\n");
  EXPECT_THROW(open_corpus(text_spec(dir.file("a.tsv"), dir.file("a.en"))), std::invalid_argument);
  EXPECT_THROW(open_corpus(text_spec(dir.file("a.en"), "")), std::invalid_argument);
  CorpusSpec same_column = text_spec(dir.file("a.tsv"), "");
  same_column.tsv_target_column = 0;
  EXPECT_THROW(open_corpus(same_column), std::invalid_argument);
  CorpusSpec forced = text_spec(dir.file("a.tsv"), "");
  forced.format = CorpusFormat::kTsv;
  EXPECT_EQ(read_all(forced).size(), 1u);
}

TEST(Multi30k, ValSetHas1014Pairs) {
  const std::filesystem::path data = testing::multi30k_dir();
  if (!std::filesystem::exists(data / "val.en.gz") ||
      !std::filesystem::exists(data / "val.de.gz")) {
    GTEST_SKIP() << "Multi30k not found in " << data << " (set NMT_DATA_DIR)";
  }
  auto reader =
      open_corpus(text_spec((data / "val.en.gz").string(), (data / "val.de.gz").string()));
  SentencePair pair;
  ASSERT_TRUE(reader->next(pair));
  EXPECT_FALSE(pair.source.empty());
  EXPECT_FALSE(pair.target.empty());
  std::int64_t pairs = 1;
  while (reader->next(pair)) ++pairs;
  EXPECT_EQ(pairs, 1014);
  EXPECT_EQ(pair.line, 1014);
  EXPECT_DOUBLE_EQ(reader->progress(), 1.0);
}

}  // namespace
}  // namespace nmt::preprocess
