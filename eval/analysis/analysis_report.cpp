// Writes the error-analysis report's three files (eval/analysis/analysis_report.h).

#include "eval/analysis/analysis_report.h"

#include <filesystem>
#include <stdexcept>
#include <system_error>

#include "common/atomic_file.h"
#include "eval/analysis/analysis_chart.h"

namespace nmt::eval::analysis {

ReportFiles write_report(const std::string& dir, const Analysis& analysis,
                         const AnalysisInput& input, const AnalysisOptions& options) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create the report folder " + dir + ": " + ec.message());
  const fs::path folder(dir);
  ReportFiles files{(folder / kReportMarkdown).string(), (folder / kReportJson).string(),
                    (folder / kReportSvg).string()};
  // Invalid UTF-8 cannot come from the tools' inputs (they reject it); replace it all the same.
  const auto json = report_json(analysis, input, options)
                        .dump(1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  write_file_atomically(files.json, json + "\n");
  write_file_atomically(files.svg, render_bucket_chart(analysis));
  // The page last: once it exists, what it shows does too.
  write_file_atomically(files.markdown, render_markdown(analysis, input, options, kReportSvg));
  return files;
}

}  // namespace nmt::eval::analysis
