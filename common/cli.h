#pragma once
// The command-line frame every tool shares: CLI11 for parsing (so --help works everywhere), the
// common logging flags, and one place that turns exceptions into a logged error and exit code 1,
// which mpirun and Slurm rely on to notice a failed rank.

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

#include "common/log.h"

namespace nmt {

// Adds --log-level and --log-file to `app`, writing into `options`.
void add_logging_flags(CLI::App& app, LogOptions& options);

// Parses argv, initialises logging and runs `body`. Returns the process exit code: CLI11's code for
// --help and usage errors, body's result, or 1 when body throws (the message is logged).
int run_tool(CLI::App& app, LogOptions& log_options, int argc, char** argv,
             const std::function<int()>& body);

}  // namespace nmt
