#pragma once
// The error-analysis report (eval/analysis/error_analysis.h) as files: a Markdown page for people,
// a JSON document for scripts and an SVG chart of scores by source-length bucket, written into one
// folder as analysis.md, analysis.json and analysis.svg.
//
// The Markdown shows texts as they are, escaped for tables only ('|', '\', Markdown's emphasis
// and HTML characters backslash-escaped, line breaks and other control characters as spaces) and
// cut to kMaxCellChars characters; the JSON holds them whole. The JSON (format "nmt-analysis",
// version 1) keeps every sentence's scores and flags, by 1-based line; see README.md.

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

#include "eval/analysis/error_analysis.h"

namespace nmt::eval::analysis {

inline constexpr const char* kReportMarkdown = "analysis.md";
inline constexpr const char* kReportJson = "analysis.json";
inline constexpr const char* kReportSvg = "analysis.svg";
inline constexpr std::size_t kMaxCellChars = 300;  // code points per Markdown table cell

// `text` as one Markdown table cell: escaped as above, cut to `max_chars` code points (then "…").
std::string markdown_cell(std::string_view text, std::size_t max_chars = kMaxCellChars);

// The Markdown page; it shows the chart from `svg_name` (relative to the page).
std::string render_markdown(const Analysis& analysis, const AnalysisInput& input,
                            const AnalysisOptions& options,
                            const std::string& svg_name = kReportSvg);

nlohmann::ordered_json report_json(const Analysis& analysis, const AnalysisInput& input,
                                   const AnalysisOptions& options);

struct ReportFiles {
  std::string markdown, json, svg;  // paths
};

// Creates `dir` if needed and writes the three files (each atomically, common/atomic_file.h).
// Throws std::runtime_error naming the path that could not be written.
ReportFiles write_report(const std::string& dir, const Analysis& analysis,
                         const AnalysisInput& input, const AnalysisOptions& options);

}  // namespace nmt::eval::analysis
