#pragma once
// The end of every tool's and benchmark's main: the logging flags after the tool's own (so that
// --help lists them last), a logger named after the tool (its CLI::App name), and the run through
// nmt::run_tool, which turns errors into the exit codes of common/cli.h.
//
//   CLI::App app{"Score a checkpoint...", "nmt-evaluate"};
//   app.add_option("--split", o.split, "Split to score");
//   return nmt::apps::run_main(app, argc, argv, [&] { return evaluate(o); });

#include <CLI/CLI.hpp>

#include <functional>
#include <string>
#include <utility>

#include "common/cli.h"
#include "common/log.h"

namespace nmt::apps {

// The logging a tool starts with, before its flags: every line labelled with the app's name.
inline LogOptions tool_log(const CLI::App& app, std::string level = "info") {
  LogOptions log;
  log.tool = app.get_name();
  log.level = std::move(level);
  return log;
}

// Adds --log-level and --log-file to `app`, writing into `log`, then parses argv, initialises
// logging and runs `body`; returns the process exit code.
inline int run_main(CLI::App& app, LogOptions& log, int argc, char** argv,
                    const std::function<int()>& body) {
  add_logging_flags(app, log);
  return run_tool(app, log, argc, argv, body);
}

inline int run_main(CLI::App& app, int argc, char** argv, const std::function<int()>& body) {
  LogOptions log = tool_log(app);
  return run_main(app, log, argc, argv, body);
}

// A benchmark's main: its output is the figures it prints, so it logs warnings and worse.
inline int run_bench(CLI::App& app, int argc, char** argv, const std::function<int()>& body) {
  LogOptions log = tool_log(app, "warn");
  return run_main(app, log, argc, argv, body);
}

}  // namespace nmt::apps
