// sacreBLEU's output formats (see report.h). Column widths count code points, as tabulate does
// without the wcwidth package (sacreBLEU does not install it).

#include "eval/metrics/report.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

namespace nmt::eval {
namespace {

std::size_t visible_width(const std::string& s) {
  return static_cast<std::size_t>(std::count_if(
      s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string fixed(double value, int width) {
  return fmt::format("{:.{}f}", value, width);
}

std::vector<std::string> split_lines_of(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  if (lines.empty()) lines.emplace_back();
  return lines;
}

// Python's format(s, '>w') and format(s, '^w').
std::string pad_right_aligned(const std::string& s, std::size_t width) {
  const std::size_t w = visible_width(s);
  return w >= width ? s : std::string(width - w, ' ') + s;
}
std::string pad_centered(const std::string& s, std::size_t width) {
  const std::size_t w = visible_width(s);
  if (w >= width) return s;
  const std::size_t left = (width - w) / 2;
  return std::string(left, ' ') + s + std::string(width - w - left, ' ');
}

std::string format_cell(const TableCell& cell, int width, bool multiline) {
  std::string out = fixed(cell.score, width);
  if (cell.interval) {
    out += fmt::format(" ({} ± {})", fixed(cell.interval->mean, width),
                       fixed(cell.interval->ci, width));
  }
  if (cell.p_value) {
    out += multiline ? "\n" : " ";
    out += fmt::format("(p = {:.4f})", *cell.p_value);
    if (*cell.p_value <= 0.05) out += "*";
  }
  return out;
}

std::string latex_escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "\\&";
        break;
      case '%':
        out += "\\%";
        break;
      case '$':
        out += "\\$";
        break;
      case '#':
        out += "\\#";
        break;
      case '_':
        out += "\\_";
        break;
      case '^':
        out += "\\^{}";
        break;
      case '{':
        out += "\\{";
        break;
      case '}':
        out += "\\}";
        break;
      case '~':
        out += "\\textasciitilde{}";
        break;
      case '\\':
        out += "\\textbackslash{}";
        break;
      case '<':
        out += "\\ensuremath{<}";
        break;
      case '>':
        out += "\\ensuremath{>}";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string rstrip_spaces(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// tabulate(headers='keys', colalign=('right',), stralign/numalign='center') in fancy_grid or
// latex_booktabs; columns[c][0] is the header.
std::string tabulate(const std::vector<std::vector<std::string>>& columns, bool latex) {
  const std::size_t n_cols = columns.size(), n_rows = columns.front().size() - 1;
  std::vector<std::size_t> widths(n_cols);
  for (std::size_t c = 0; c < n_cols; ++c) {
    widths[c] = visible_width(columns[c][0]) + 2;  // tabulate's MIN_PADDING for headers
    for (std::size_t r = 1; r <= n_rows; ++r) {
      for (const auto& line : split_lines_of(columns[c][r])) {
        widths[c] = std::max(widths[c], visible_width(line));
      }
    }
  }
  const auto align = [&](std::size_t c, const std::string& s) {
    return c == 0 ? pad_right_aligned(s, widths[c]) : pad_centered(s, widths[c]);
  };
  const auto rule = [&](const char* left, const char* fill, const char* mid, const char* right) {
    std::string line = left;
    for (std::size_t c = 0; c < n_cols; ++c) {
      if (c > 0) line += mid;
      for (std::size_t k = 0; k < widths[c] + 2; ++k) line += fill;
    }
    return line + right + "\n";
  };
  // One table row (several text lines when a cell has several).
  const auto row = [&](std::size_t r) {
    std::vector<std::vector<std::string>> cells(n_cols);
    std::size_t height = 1;
    for (std::size_t c = 0; c < n_cols; ++c) {
      cells[c] = split_lines_of(columns[c][r]);
      height = std::max(height, cells[c].size());
    }
    std::string out;
    for (std::size_t k = 0; k < height; ++k) {
      std::string line = latex ? "" : "│";
      for (std::size_t c = 0; c < n_cols; ++c) {
        const std::string text =
            k < cells[c].size() ? align(c, cells[c][k]) : std::string(widths[c], ' ');
        if (latex) {
          line += (c > 0 ? "&" : "") + latex_escape(" " + text + " ");
        } else {
          line += " " + text + " │";
        }
      }
      out += rstrip_spaces(latex ? line + "\\\\" : line) + "\n";
    }
    return out;
  };
  std::string out;
  if (latex) {
    out += "\\begin{tabular}{r" + std::string(n_cols - 1, 'c') + "}\n\\toprule\n";
    out += row(0) + "\\midrule\n";
    for (std::size_t r = 1; r <= n_rows; ++r) out += row(r);
    return out + "\\bottomrule\n\\end{tabular}\n";
  }
  out += rule("╒", "═", "╤", "╕") + row(0) + rule("╞", "═", "╪", "╡");
  for (std::size_t r = 1; r <= n_rows; ++r) {
    if (r > 1) out += rule("├", "─", "┼", "┤");
    out += row(r);
  }
  return out + rule("╘", "═", "╧", "╛");
}

std::string table_json(const ResultsTable& table, int width) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (std::size_t s = 0; s < table.systems.size(); ++s) {
    nlohmann::ordered_json row;
    row["system"] = table.systems[s];
    for (std::size_t m = 0; m < table.metrics.size(); ++m) {
      const TableCell& cell = table.cells[m][s];
      if (!table.paired) {
        row[table.metrics[m]] = fixed(cell.score, width);
        continue;
      }
      nlohmann::ordered_json result;  // sacreBLEU's Result.__dict__
      result["score"] = cell.score;
      result["p_value"] = cell.p_value ? nlohmann::ordered_json(*cell.p_value) : nullptr;
      result["mean"] = cell.interval ? nlohmann::ordered_json(cell.interval->mean) : nullptr;
      result["ci"] = cell.interval ? nlohmann::ordered_json(cell.interval->ci) : nullptr;
      row[table.metrics[m]] = result;
    }
    rows.push_back(row);
  }
  return rows.dump(4) + "\n";
}

std::string paired_notes(const PairedTestInfo& info, const std::string& baseline) {
  const std::string msg = info.bootstrap ? fmt::format(
                                               "Paired bootstrap resampling test with {} "
                                               "resampling trials",
                                               info.samples)
                                         : fmt::format(
                                               "Paired approximate randomization test with {} "
                                               "trials",
                                               info.samples);
  const std::string bar(msg.size(), '-');
  std::string out = bar + "\n" + msg + "\n" + bar + "\n";
  // The layout (title between rules, then notes) is sacreBLEU's; the notes are our own words.
  out += " - Every system is tested against the baseline, " + baseline + ".\n";
  out += info.bootstrap ? "   Per metric: the system's score, the mean of its resampled scores and "
                          "the 95% interval around it.\n"
                        : "   Per metric: the system's score.\n";
  out +=
      "\n"
      " - The p-value estimates how often a score difference at least this large would arise\n"
      "   by chance if system and baseline came from one and the same process (the null\n"
      "   hypothesis).\n"
      "\n"
      " - A p-value below 0.05 (marked \"*\") rejects the null hypothesis at that threshold: the\n"
      "   difference is unlikely to be chance. Larger p-values are printed unmarked (no colour).\n"
      "\n"
      " - A significant difference says the systems differ reproducibly, not which one is\n"
      "   better.\n"
      "\n";
  return out;
}

}  // namespace

std::string format_score(const MetricScore& score, int width, bool score_only,
                         const std::string& signature, bool json,
                         const std::optional<Interval>& interval) {
  nlohmann::ordered_json j;
  j["name"] = score.name;
  j["score"] = std::stod(fixed(score.score, width));
  j["signature"] = signature;
  std::string sc = fixed(score.score, width);
  if (interval && interval->mean > 0) {
    const std::string mean = fixed(interval->mean, width), ci = fixed(interval->ci, width);
    const std::string confidence = "μ = " + mean + " ± " + ci;
    sc += " (" + confidence + ")";
    j["confidence_mean"] = std::stod(mean);
    j["confidence_var"] = std::stod(ci);
    j["confidence"] = confidence;
  }
  std::string full = (signature.empty() ? score.name : score.name + "|" + signature) + " = " + sc;
  if (!score.verbose.empty()) {
    full += " " + score.verbose;
    j["verbose_score"] = score.verbose;
  }
  if (score_only) return sc;
  if (!json) return full;
  std::istringstream fields(signature);
  for (std::string field; std::getline(fields, field, '|');) {
    const auto colon = field.find(':');
    j[field.substr(0, colon)] = field.substr(colon + 1);
  }
  return j.dump(1);
}

std::string single_results(const std::vector<std::string>& lines, bool json) {
  if (lines.empty()) return "";
  if (json) {
    if (lines.size() == 1) return lines.front() + "\n";
    std::string joined;
    for (const auto& line : lines) joined += (joined.empty() ? "" : ",\n") + line;
    return "[\n" + joined + "\n]\n";
  }
  if (lines.size() == 1) return lines.front() + "\n";
  std::string out;
  std::vector<std::pair<std::size_t, const std::string*>> aligned;
  for (const auto& line : lines) {
    const auto eq = line.find('=');
    if (eq == std::string::npos) {
      out += line + "\n";  // sacreBLEU prints these at once, unaligned
    } else {
      aligned.emplace_back(eq == 0 ? 0 : eq - 1, &line);
    }
  }
  std::size_t width = 0;
  for (const auto& [split, line] : aligned)
    width = std::max(width, visible_width(line->substr(0, split)));
  for (const auto& [split, line] : aligned) {
    out += pad_right_aligned(line->substr(0, split), width) + line->substr(split) + "\n";
  }
  return out;
}

std::string results_table(const ResultsTable& table, OutputFormat format, int width,
                          const std::optional<PairedTestInfo>& paired) {
  if (format == OutputFormat::kJson) return table_json(table, width);
  const bool latex = format == OutputFormat::kLatex;
  std::vector<std::vector<std::string>> columns;
  columns.push_back({"System"});
  for (const auto& name : table.systems) columns.back().push_back(name);
  for (std::size_t m = 0; m < table.metrics.size(); ++m) {
    const bool bootstrap = std::any_of(table.cells[m].begin(), table.cells[m].end(),
                                       [](const TableCell& c) { return c.interval.has_value(); });
    columns.push_back({table.metrics[m] + (bootstrap ? " (μ ± 95% CI)" : "")});
    for (const auto& cell : table.cells[m]) {
      columns.back().push_back(format_cell(cell, width, !latex));
    }
  }
  std::string out = tabulate(columns, latex) + "\n";
  // sacreBLEU names the baseline only when its row reads "Baseline: NAME" (not on stdin input).
  const std::string& first = table.systems.front();
  if (paired) out += paired_notes(*paired, first.rfind("Baseline:", 0) == 0 ? first : "");
  out += "-----------------\nMetric signatures\n-----------------\n";
  for (const auto& [name, sig] : table.signatures) {
    out += fmt::format(" - {:<10} {}\n", name, sig);
  }
  return out;
}

}  // namespace nmt::eval
