#include "common/cli.h"

#include <exception>

namespace nmt {

void add_logging_flags(CLI::App& app, LogOptions& options) {
  app.add_option("--log-level", options.level,
                 "Log level: trace, debug, info, warn, error, critical, off")
      ->capture_default_str();
  app.add_option("--log-file", options.file, "Also append log lines to this file");
}

int run_tool(CLI::App& app, LogOptions& log_options, int argc, char** argv,
             const std::function<int()>& body) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  try {
    init_logging(log_options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", app.get_name().c_str(), e.what());
    return 2;
  }
  try {
    return body();
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
  } catch (...) {
    spdlog::error("unknown exception");
  }
  spdlog::default_logger()->flush();
  return 1;
}

}  // namespace nmt
