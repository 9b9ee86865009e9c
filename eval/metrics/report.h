#pragma once
// How sacreBLEU 2.x prints results, reproduced character for character: one score
// (metrics/base.py: Score.format), the single-system block aligned on '='
// (utils.print_single_results), and the multi-system table (utils.print_results_table with
// tabulate's fancy_grid for text, latex_booktabs for latex, or JSON), the paired-test notes and
// the signature list under it. Deliberate differences: never any terminal colour, and paired-test
// tables also print as JSON (sacreBLEU's json.dumps fails there on numpy float32 scores).

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "eval/metrics/metric.h"
#include "eval/metrics/significance.h"

namespace nmt::eval {

enum class OutputFormat { kJson, kText, kLatex };

// Score.format: "NAME|SIG = 12.3 (μ = 12.2 ± 0.8) VERBOSE", or just "12.3" with `score_only`, or
// sacreBLEU's JSON object (indent 1) with `json`. The interval shows only when its mean is > 0,
// as in sacreBLEU.
std::string format_score(const MetricScore& score, int width, bool score_only,
                         const std::string& signature, bool json,
                         const std::optional<Interval>& interval = std::nullopt);

// print_single_results: a JSON list when several in JSON, else the lines right-aligned on their
// first '=' (lines without one, such as bare scores, print as they are). Ends with a newline.
std::string single_results(const std::vector<std::string>& lines, bool json);

// One cell of the multi-system table.
struct TableCell {
  double score = 0.0;
  std::optional<double> p_value;     // paired tests, systems other than the baseline
  std::optional<Interval> interval;  // paired bootstrap
};

struct ResultsTable {
  std::vector<std::string> systems;           // row names; "Baseline: NAME" first in paired tests
  std::vector<std::string> metrics;           // column names (score names)
  std::vector<std::vector<TableCell>> cells;  // [metric][system]
  std::vector<std::pair<std::string, std::string>> signatures;  // (metric name, signature)
  bool paired = false;
};

struct PairedTestInfo {
  bool bootstrap = true;  // else approximate randomization
  int samples = 0;        // resamples or trials
};

// Everything print_results_table prints, ending with a newline.
std::string results_table(const ResultsTable& table, OutputFormat format, int width,
                          const std::optional<PairedTestInfo>& paired);

}  // namespace nmt::eval
