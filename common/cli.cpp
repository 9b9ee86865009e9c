#include "common/cli.h"
#include "common/thread_pools.h"

#include <cstdio>
#include <exception>

namespace nmt {

std::string shell_command_line(int argc, const char* const* argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) {
    const std::string argument = argv[i];
    const bool plain = !argument.empty() && argument.find_first_not_of(
                                                "abcdefghijklmnopqrstuvwxyz"
                                                "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                                "-_./=:,+@%") == std::string::npos;
    if (i > 0) line += ' ';
    if (plain) {
      line += argument;
      continue;
    }
    line += '\'';
    for (const char c : argument) {
      if (c == '\'') {
        line += "'\\''";  // close the quotes, an escaped quote, reopen
      } else {
        line += c;
      }
    }
    line += '\'';
  }
  return line;
}

void add_logging_flags(CLI::App& app, LogOptions& options) {
  app.add_option("--log-level", options.level,
                 "Log level: trace, debug, info, warn, error, critical, off")
      ->capture_default_str();
  app.add_option("--log-file", options.file, "Also append log lines to this file");
}

int run_tool(CLI::App& app, LogOptions& log_options, int argc, char** argv,
             const std::function<int()>& body) {
  settle_openmp_waiting(argv);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the help (exit code 0) or the error with its usage hint; its own codes for the
    // errors (105 to 114 and more) are one code here.
    const int code = app.exit(e);
    return code == static_cast<int>(CLI::ExitCodes::Success) ? 0 : kExitUsage;
  }
  try {
    init_logging(log_options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), e.what());
    return kExitUsage;
  }
  try {
    return body();
  } catch (const UsageError& e) {
    spdlog::error("{} (see {} --help)", e.what(), app.get_name());
    spdlog::default_logger()->flush();
    return kExitUsage;
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
  } catch (...) {
    spdlog::error("unknown exception");
  }
  spdlog::default_logger()->flush();
  return kExitFailure;
}

}  // namespace nmt
