#pragma once
// The files an error analysis reads (eval/analysis/error_analysis.h): a source, a reference and one
// hypothesis file per system, line-aligned, plain or gzipped. Lines are split as nmt-bleu splits
// them (eval/metrics/bleu.h split_lines: '\n' ends a line, every line right-stripped, strict
// UTF-8). Every problem is an error naming the file, and the line where there is one.

#include <string>
#include <vector>

#include "eval/analysis/error_analysis.h"

namespace nmt::eval::analysis {

struct InputFiles {
  std::string source, reference;
  std::vector<std::string> hypotheses;  // one per system, at least one
  std::vector<std::string> names;       // one per hypothesis file, or none for the defaults
};

// The whole file, gunzipped when it is gzip data. `role` ("source", ...) names it in errors.
// Throws std::runtime_error on a missing file, a directory, corrupt or truncated gzip data.
std::string read_text_file(const std::string& path, const std::string& role);

// Without `names`: the files' names, or their paths as given when two share a name; a name that
// is still taken gets " (2)", " (3)"..., so every system has its own. Throws std::invalid_argument
// when `names` is not empty and not one per hypothesis file.
std::vector<std::string> system_names(const InputFiles& files);

// Reads and checks everything (std::runtime_error naming the file otherwise): valid UTF-8 (the
// line named), no file empty, the same line count everywhere (an error names
// the source and the other file with both counts), no empty reference line (named).
AnalysisInput read_analysis_input(const InputFiles& files);

}  // namespace nmt::eval::analysis
