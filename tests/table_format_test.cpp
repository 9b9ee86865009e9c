// The sweep table as nmt-tracker prints it: the paper's column labels, parameter counts in
// millions (three significant digits for small models), blanks for missing figures, row labels
// first, and Markdown and CSV escaping of awkward labels; and the plain text tables of the other
// commands.

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "tracker/client/table_format.h"

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

}  // namespace
}  // namespace nmt::tracker
