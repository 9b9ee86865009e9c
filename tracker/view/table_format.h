#pragma once
// Tables as nmt-tracker prints them: plain aligned text tables, and the daemon's sweep table
// (GET /api/sweeps/{name}/table, tracker/API.md) in the layout of the paper's Table 3: one line per
// row in spec order, the row label first, then the varied architecture columns and the figures
// (parameters in millions, PPL to 2 and BLEU to 1 decimal). Every text they hold passes through
// printable(): names come from whoever wrote to the daemon, and must not drive the terminal.

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace nmt::tracker {

enum class TableFormat { kMarkdown, kCsv, kJson };

// "md", "csv" or "json"; anything else is std::invalid_argument.
TableFormat parse_table_format(const std::string& name);

// The whole table as text, ending in a newline.
std::string render_sweep_table(const nlohmann::json& table, TableFormat format);

// Left-aligned columns two spaces apart, each as wide as its widest cell; the header first. No
// trailing blanks. Rows shorter than the header leave their last columns empty. Cells and header
// are printed printable().
std::string render_text_table(const std::vector<std::string>& header,
                              const std::vector<std::vector<std::string>>& rows);

// `text` safe to print on a terminal: C0 controls (tab and newline included), DEL and undecodable
// bytes as \xHH, the C1 controls U+0080..U+009F as \u00HH; everything else, other UTF-8 and
// backslashes included, unchanged (so printable(printable(s)) == printable(s)). For display only:
// JSON output is printed as the daemon sent it.
std::string printable(std::string_view text);

// A JSON value as a table cell, printable(): "-" for null, integers plainly, other numbers in
// their shortest exact form.
std::string json_cell(const nlohmann::json& value);

}  // namespace nmt::tracker
