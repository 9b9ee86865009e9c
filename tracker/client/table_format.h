#pragma once
// Tables as nmt-tracker prints them: plain aligned text tables, and the daemon's sweep table
// (GET /api/sweeps/{name}/table, tracker/API.md) in the layout of the paper's Table 3: one line per
// row in spec order, the row label first, then the varied architecture columns and the figures
// (parameters in millions, PPL to 2 and BLEU to 1 decimal).

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace nmt::tracker {

enum class TableFormat { kMarkdown, kCsv, kJson };

// "md", "csv" or "json"; anything else is std::invalid_argument.
TableFormat parse_table_format(const std::string& name);

// The whole table as text, ending in a newline.
std::string render_sweep_table(const nlohmann::json& table, TableFormat format);

// Left-aligned columns two spaces apart, each as wide as its widest cell; the header first. No
// trailing blanks. Rows shorter than the header leave their last columns empty.
std::string render_text_table(const std::vector<std::string>& header,
                              const std::vector<std::vector<std::string>>& rows);

// A JSON value as a table cell: "-" for null, integers plainly, other numbers in their shortest
// exact form.
std::string json_cell(const nlohmann::json& value);

}  // namespace nmt::tracker
