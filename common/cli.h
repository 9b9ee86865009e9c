#pragma once
// The command-line frame every tool shares: CLI11 for parsing (so --help works everywhere), the
// common logging flags, and one place that turns errors into exit codes. Every tool exits
//   0  done, or --help / --version (the usage is printed)
//   2  an argument error: an unknown option, a malformed or missing value, options that conflict
//      (CLI11's own errors, which it reports with the usage hint, and UsageError)
//   1  any other error, logged; mpirun and Slurm rely on a non-zero status to notice a failed rank
// and may add codes of its own (nmt-train: 75 and 130 after a stop; nmt-tracker: 3 unreachable).

#include <CLI/CLI.hpp>

#include <functional>
#include <stdexcept>
#include <string>

#include "common/log.h"

namespace nmt {

constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;  // the shell's convention for a usage error

// An argument error that the parser cannot see, found by the tool: options that need or exclude
// each other, a value in the wrong form. Thrown from run_tool's body, it exits kExitUsage. An
// argument that disagrees with an input (--row beyond the sweep's rows) is an ordinary error.
struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// A CLI11 check that runs the tool's own parser on the value, so that a value it refuses is an
// argument error found while parsing, with the parser's message:
//   app.add_option("--precision", name)->check(nmt::parsed_by(runtime::parse_precision));
template <class Parse>
CLI::Validator parsed_by(Parse parse) {
  return CLI::Validator(
      [parse](std::string& value) -> std::string {
        try {
          parse(value);
          return {};
        } catch (const std::exception& e) {
          return e.what();
        }
      },
      "");
}

// The command line as one string a shell would run again: each argument quoted with single quotes
// when it holds anything but letters, digits and -_./=:,+@% (for run provenance).
std::string shell_command_line(int argc, const char* const* argv);

// Adds --log-level and --log-file to `app`, writing into `options`.
void add_logging_flags(CLI::App& app, LogOptions& options);

// Parses argv, initialises logging and runs `body`. Returns the process exit code: 0 for --help and
// --version, kExitUsage for a parse error, a bad logging flag or a UsageError from body, body's
// result, or kExitFailure when body throws anything else (the message is logged).
int run_tool(CLI::App& app, LogOptions& log_options, int argc, char** argv,
             const std::function<int()>& body);

}  // namespace nmt
