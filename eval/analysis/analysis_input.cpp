// Reading an error analysis's files (eval/analysis/analysis_input.h).

#include "eval/analysis/analysis_input.h"

#include <fmt/format.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <set>
#include <stdexcept>

#include "eval/metrics/bleu.h"

namespace nmt::eval::analysis {
namespace {

std::vector<std::string> read_lines(const std::string& path, const std::string& role) {
  std::vector<std::string> lines;
  try {
    lines = split_lines(read_text_file(path, role), fmt::format("{} file '{}'", role, path),
                        /*universal_newlines=*/false);
  } catch (const std::invalid_argument& e) {  // invalid UTF-8: an input problem, not an argument
    throw std::runtime_error(e.what());
  }
  if (lines.empty()) throw std::runtime_error(fmt::format("{} file '{}' is empty", role, path));
  return lines;
}

void check_same_length(const std::vector<std::string>& lines, const std::string& role,
                       const std::string& path, const AnalysisInput& input) {
  if (lines.size() == input.sources.size()) return;
  throw std::runtime_error(
      fmt::format("line counts differ: source '{}' has {} lines, {} '{}' has {}", input.source_file,
                  input.sources.size(), role, path, lines.size()));
}

}  // namespace

std::string read_text_file(const std::string& path, const std::string& role) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw std::runtime_error(fmt::format("{} file '{}' is a directory", role, path));
  }
  // zlib reads a file that is not gzip data as it is.
  const std::unique_ptr<gzFile_s, int (*)(gzFile)> gz(gzopen(path.c_str(), "rb"), gzclose);
  if (!gz) {
    throw std::runtime_error(
        fmt::format("cannot open {} file '{}': {}", role, path, std::strerror(errno)));
  }
  std::string data;
  std::vector<char> buffer(1 << 16);
  for (;;) {
    const int count = gzread(gz.get(), buffer.data(), static_cast<unsigned>(buffer.size()));
    // A truncated stream reads like a short one unless the error state is checked every time.
    int code = Z_OK;
    const char* message = gzerror(gz.get(), &code);
    if (count < 0 || code != Z_OK) {
      throw std::runtime_error(
          fmt::format("{} file '{}': corrupt or truncated gzip data, or a read error ({})", role,
                      path, code == Z_ERRNO ? std::strerror(errno) : message));
    }
    if (count == 0) return data;
    data.append(buffer.data(), static_cast<std::size_t>(count));
  }
}

std::vector<std::string> system_names(const InputFiles& files) {
  if (!files.names.empty() && files.names.size() != files.hypotheses.size()) {
    throw std::invalid_argument(
        fmt::format("{} names for {} hypothesis files: give one name per hypothesis file",
                    files.names.size(), files.hypotheses.size()));
  }
  std::vector<std::string> names = files.names;
  if (names.empty()) {
    std::set<std::string> distinct;
    for (const auto& path : files.hypotheses) {
      names.push_back(std::filesystem::path(path).filename().string());
      distinct.insert(names.back());
    }
    if (distinct.size() < names.size()) names = files.hypotheses;
  }
  std::set<std::string> taken;
  for (auto& name : names) {
    const std::string base = name;
    for (int k = 2; !taken.insert(name).second; ++k) name = fmt::format("{} ({})", base, k);
  }
  return names;
}

AnalysisInput read_analysis_input(const InputFiles& files) {
  AnalysisInput input;
  input.source_file = files.source;
  input.reference_file = files.reference;
  const auto names = system_names(files);
  input.sources = read_lines(files.source, "source");
  input.references = read_lines(files.reference, "reference");
  check_same_length(input.references, "reference", files.reference, input);
  for (std::size_t i = 0; i < input.references.size(); ++i) {
    if (input.references[i].empty()) {
      throw std::runtime_error(
          fmt::format("reference file '{}' line {} is empty: every sentence needs a reference",
                      files.reference, i + 1));
    }
  }
  for (std::size_t k = 0; k < files.hypotheses.size(); ++k) {
    auto lines = read_lines(files.hypotheses[k], "hypothesis");
    check_same_length(lines, "hypothesis", files.hypotheses[k], input);
    input.systems.push_back({names[k], files.hypotheses[k], std::move(lines)});
  }
  return input;
}

}  // namespace nmt::eval::analysis
