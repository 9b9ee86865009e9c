// The sweep table as nmt-tracker prints it: the paper's column labels, parameter counts in
// millions (three significant digits for small models), blanks for missing figures, row labels
// first, and Markdown and CSV escaping of awkward labels; and the plain text tables of the other
// commands. Names with terminal controls (an ESC sequence, C1, DEL) are printed escaped, never raw.

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "common/utf8.h"
#include "tracker/view/table_format.h"

namespace nmt::tracker {
namespace {

using nlohmann::json;

json two_row_table() {
  return json{
      {"sweep", "s"},
      {"columns", {"model.heads", "model.d_k", "params", "dev_ppl", "dev_bleu", "ref_params"}},
      {"rows",
       {{{"row_label", "base"},
         {"name", "s-00-base"},
         {"values",
          {{"model.heads", 8},
           {"model.d_k", 64},
           {"params", 65000000},
           {"dev_ppl", 4.921},
           {"dev_bleu", 25.83},
           {"ref_params", 65}}}},
        {{"row_label", "A, \"h|1\""},
         {"name", "s-01-A"},
         {"values",
          {{"model.heads", 1},
           {"model.d_k", 512},
           {"params", 412345},
           {"dev_ppl", nullptr},
           {"dev_bleu", nullptr},
           {"ref_params", nullptr}}}}}}};
}

TEST(TableFormat, MarkdownUsesPaperLabelsAndMillions) {
  const std::string text = render_sweep_table(two_row_table(), TableFormat::kMarkdown);
  EXPECT_NE(text.find("|  | h | d_k | params ×10^6 | PPL (dev) | BLEU (dev) | paper params |\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("| base | 8 | 64 | 65.0 | 4.92 | 25.8 | 65.0 |\n"), std::string::npos)
      << text;
  // 412,345 parameters keep three significant digits; missing figures are blank; the pipe in the
  // label is escaped so the row keeps its columns.
  EXPECT_NE(text.find("| A, \"h\\|1\" | 1 | 512 | 0.412 |  |  |  |\n"), std::string::npos) << text;
}

TEST(TableFormat, CsvQuotesLabelsWithCommasAndQuotes) {
  const std::string text = render_sweep_table(two_row_table(), TableFormat::kCsv);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "row,h,d_k,params ×10^6,PPL (dev),BLEU (dev),paper params");
  EXPECT_NE(text.find("\n\"A, \"\"h|1\"\"\",1,512,0.412,,,\n"), std::string::npos) << text;
}

TEST(TableFormat, JsonIsTheDaemonsTableUnchanged) {
  const json table = two_row_table();
  EXPECT_EQ(json::parse(render_sweep_table(table, TableFormat::kJson)), table);
}

TEST(TableFormat, UnknownFormatIsRejectedByName) {
  EXPECT_EQ(parse_table_format("csv"), TableFormat::kCsv);
  try {
    parse_table_format("xlsx");
    FAIL() << "xlsx accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("xlsx"), std::string::npos);
  }
}

TEST(TableFormat, CellsPrintIntegersPlainlyAndNullAsDash) {
  EXPECT_EQ(json_cell(json(256)), "256");
  EXPECT_EQ(json_cell(json(0.1)), "0.1");
  EXPECT_EQ(json_cell(json(nullptr)), "-");
  EXPECT_EQ(json_cell(json("learned")), "learned");
  // Shortest round trip, and bools as words.
  EXPECT_EQ(json_cell(json(1e-5)), "1e-05");
  EXPECT_EQ(json_cell(json(0.1 + 0.2)), "0.30000000000000004");
  EXPECT_EQ(json_cell(json(true)), "true");
  EXPECT_EQ(json_cell(json(false)), "false");
}

TEST(TableFormat, TextTableAlignsColumnsWithoutTrailingBlanks) {
  const std::string text = render_text_table({"attempt", "status", "host"},
                                             {{"1", "preempted", "node-17"}, {"2", "running"}});
  EXPECT_EQ(text,
            "attempt  status     host\n"
            "1        preempted  node-17\n"
            "2        running\n");
  EXPECT_EQ(render_text_table({"id"}, {}), "id\n");
}

// True when `text` is well-formed UTF-8 without a character a terminal acts on: C0 controls but for
// newline, DEL, and C1 (U+0080 to U+009F).
bool terminal_safe(const std::string& text) {
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0 || (c < 0x20 && c != '\n') || c == 0x7F) return false;
    if (c == 0xC2 && static_cast<unsigned char>(text[i + 1]) <= 0x9F) return false;
    i += length;
  }
  return true;
}

TEST(Printable, EscapesControlsAndKeepsEverythingElse) {
  EXPECT_EQ(printable("base-run_1.2 (h=8)"), "base-run_1.2 (h=8)");
  EXPECT_EQ(printable("\x1b[2J\x1b]0;owned\x07red"), "\\x1b[2J\\x1b]0;owned\\x07red");
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(printable("tab\there\nline\rdel\x7f"), "tab\\x09here\\x0aline\\x0ddel\\x7f");
  EXPECT_EQ(printable("csi\xc2\x9b"
                      "31m"),
            "csi\\u009b31m");  // C1 CSI, UTF-8 encoded
  EXPECT_EQ(printable("raw\x9b"
                      "31m\xff"),
            "raw\\x9b31m\\xff");  // bytes that are not UTF-8
  EXPECT_EQ(printable("trunc\xe2\x82"), "trunc\\xe2\\x82");
  EXPECT_EQ(printable("Ü ×10^6 € 🙂 \xc2\xa0"),
            "Ü ×10^6 € 🙂 \xc2\xa0");                // U+00A0 is no control
  EXPECT_EQ(printable("C:\\runs\\x1b"), "C:\\runs\\x1b");  // backslashes stay as written
  const std::string once = printable("\x1b\x9b\xc2\x85\\");
  EXPECT_EQ(printable(once), once);
}

TEST(Printable, EveryCellAndHeaderOfEveryTableIsEscaped) {
  const std::string evil = "run\x1b[31m\xc2\x9b\x7f";
  EXPECT_EQ(json_cell(json(evil)), "run\\x1b[31m\\u009b\\x7f");
  // Arrays and objects as cells: JSON escapes C0 itself, not DEL or C1.
  EXPECT_EQ(json_cell(json::array({evil})), "[\"run\\u001b[31m\\u009b\\x7f\"]");
  const std::string text = render_text_table({"name", evil}, {{evil, "1"}, {"ok"}});
  EXPECT_TRUE(terminal_safe(text)) << text;
  // Columns line up on the escaped text.
  EXPECT_EQ(text,
            "name                   run\\x1b[31m\\u009b\\x7f\n"
            "run\\x1b[31m\\u009b\\x7f  1\n"
            "ok\n");

  json table = two_row_table();
  table["columns"].push_back(evil);
  table["rows"][0]["row_label"] = evil;
  table["rows"][0]["values"][evil] = evil;
  table["rows"][1]["row_label"] = nullptr;
  table["rows"][1]["name"] = "s-01\x1b]0;title\x07";
  for (const auto format : {TableFormat::kMarkdown, TableFormat::kCsv}) {
    const std::string out = render_sweep_table(table, format);
    EXPECT_TRUE(terminal_safe(out)) << out;
    EXPECT_NE(out.find("run\\x1b[31m\\u009b\\x7f"), std::string::npos) << out;
    EXPECT_NE(out.find("s-01\\x1b]0;title\\x07"), std::string::npos) << out;
  }
  // JSON output stays the daemon's table, byte for byte what dump() gives.
  EXPECT_EQ(render_sweep_table(table, TableFormat::kJson), table.dump(2) + "\n");
}

}  // namespace
}  // namespace nmt::tracker
