#include "tracker/view/table_format.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <stdexcept>
#include <vector>

#include "common/utf8.h"

namespace nmt::tracker {
namespace {

using nlohmann::json;

// How a sweep-table column reads in the paper's Table 3.
struct ColumnStyle {
  std::string label;
  int decimals = -1;  // -1: as stored
  bool millions = false;
};

ColumnStyle column_style(const std::string& column) {
  static const std::map<std::string, ColumnStyle> kStyles = {
      {"model.layers", {"N"}},
      {"model.d_model", {"d_model"}},
      {"model.d_ff", {"d_ff"}},
      {"model.heads", {"h"}},
      {"model.d_k", {"d_k"}},
      {"model.d_v", {"d_v"}},
      {"model.dropout", {"P_drop"}},
      {"train.label_smoothing", {"eps_ls"}},
      {"model.positions", {"positions"}},
      {"train.max_steps", {"train steps"}},
      {"params", {"params ×10^6", 1, true}},
      {"dev_ppl", {"PPL (dev)", 2}},
      {"dev_bleu", {"BLEU (dev)", 1}},
      {"test_bleu", {"BLEU (test)", 1}},
      {"ref_ppl", {"paper PPL", 2}},
      {"ref_bleu", {"paper BLEU", 1}},
      {"ref_params", {"paper params", 1, true}},
  };
  const auto it = kStyles.find(column);
  return it == kStyles.end() ? ColumnStyle{column} : it->second;
}

std::string table_cell(const json& value, const ColumnStyle& style) {
  if (value.is_null()) {
    return "";
  }
  if (!value.is_number() || style.decimals < 0) {
    return json_cell(value);
  }
  double x = value.get<double>();
  // Counts are stored in full; a reference may already be in millions as the paper prints it.
  int decimals = style.decimals;
  if (style.millions && std::abs(x) >= 1e4) {
    x /= 1e6;
    // Small models (a sweep at CPU scale) keep three significant digits instead of "0.0".
    while (decimals < 6 && std::abs(x) < std::pow(10.0, 2 - decimals)) {
      ++decimals;
    }
  }
  return fmt::format("{:.{}f}", x, decimals);
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\n") == std::string::npos) {
    return text;
  }
  std::string quoted = "\"";
  for (const char c : text) {
    quoted += c == '"' ? std::string("\"\"") : std::string(1, c);
  }
  return quoted + "\"";
}

std::string md_field(std::string text) {
  for (std::size_t i = 0; (i = text.find('|', i)) != std::string::npos; i += 2) {
    text.insert(i, "\\");
  }
  return text;
}

std::string render_line(const std::vector<std::string>& cells, TableFormat format) {
  std::vector<std::string> fields;
  for (const auto& cell : cells) {
    fields.push_back(format == TableFormat::kMarkdown ? md_field(printable(cell))
                                                      : csv_field(printable(cell)));
  }
  return format == TableFormat::kMarkdown ? fmt::format("| {} |\n", fmt::join(fields, " | "))
                                          : fmt::format("{}\n", fmt::join(fields, ","));
}

}  // namespace

TableFormat parse_table_format(const std::string& name) {
  if (name == "md") {
    return TableFormat::kMarkdown;
  }
  if (name == "csv") {
    return TableFormat::kCsv;
  }
  if (name == "json") {
    return TableFormat::kJson;
  }
  throw std::invalid_argument(fmt::format("table format '{}': expected md, csv or json", name));
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const std::size_t length = utf8_sequence_length(text, i);
    if (length == 0 || byte < 0x20 || byte == 0x7F) {
      out += fmt::format("\\x{:02x}", byte);
      ++i;
    } else if (byte == 0xC2 && static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(text[i + 1]));  // C1: U+0080..9F
      i += 2;
    } else {
      out.append(text, i, length);
      i += length;
    }
  }
  return out;
}

std::string json_cell(const json& value) {
  if (value.is_null()) {
    return "-";
  }
  if (value.is_string()) {
    return printable(value.get<std::string>());
  }
  if (value.is_number_integer()) {
    return std::to_string(value.get<std::int64_t>());
  }
  if (value.is_number_float()) {
    return fmt::format("{}", value.get<double>());
  }
  // JSON escapes C0 controls in strings, not DEL or C1.
  return printable(value.dump(-1, ' ', false, json::error_handler_t::replace));
}

std::string render_text_table(const std::vector<std::string>& raw_header,
                              const std::vector<std::vector<std::string>>& raw_rows) {
  const auto printable_row = [](const std::vector<std::string>& row) {
    std::vector<std::string> out;
    for (const auto& cell : row) out.push_back(printable(cell));
    return out;
  };
  const std::vector<std::string> header = printable_row(raw_header);
  std::vector<std::vector<std::string>> rows;
  for (const auto& row : raw_rows) rows.push_back(printable_row(row));
  std::vector<std::size_t> width(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) {
    width[c] = header[c].size();
  }
  for (const auto& row : rows) {
    for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) {
      width[c] = std::max(width[c], row[c].size());
    }
  }
  std::string text;
  const auto add_row = [&](const std::vector<std::string>& row) {
    for (std::size_t c = 0; c < row.size(); ++c) {
      text += fmt::format("{:<{}}", row[c], c + 1 < row.size() ? width[c] + 2 : 0);
    }
    text += "\n";
  };
  add_row(header);
  for (const auto& row : rows) {
    add_row(row);
  }
  return text;
}

std::string render_sweep_table(const json& table, TableFormat format) {
  if (format == TableFormat::kJson) {
    return table.dump(2) + "\n";
  }
  const auto columns = table.at("columns").get<std::vector<std::string>>();
  std::vector<std::string> header = {format == TableFormat::kMarkdown ? "" : "row"};
  for (const auto& column : columns) {
    header.push_back(column_style(column).label);
  }
  std::string text = render_line(header, format);
  if (format == TableFormat::kMarkdown) {
    text += fmt::format("|:---|{}|\n",
                        fmt::join(std::vector<std::string>(columns.size(), "---:"), "|"));
  }
  for (const auto& row : table.at("rows")) {
    const json label = row.value("row_label", json());
    std::vector<std::string> cells = {
        json_cell(label.is_null() ? row.value("name", json()) : label)};
    for (const auto& column : columns) {
      cells.push_back(table_cell(row.at("values").value(column, json()), column_style(column)));
    }
    text += render_line(cells, format);
  }
  return text;
}

}  // namespace nmt::tracker
