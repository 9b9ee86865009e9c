#pragma once
// The one logger of the project. Every tool configures it once in main (through nmt::run_tool);
// library code logs with spdlog's free functions (spdlog::info, spdlog::warn...), which write here.

#include <spdlog/spdlog.h>

#include <optional>
#include <string>

namespace nmt {

struct LogOptions {
  std::string tool = "nmt";    // shown in every line, so interleaved logs of several tools separate
  std::string level = "info";  // trace, debug, info, warn, error, critical, off
  std::string file;            // also append to this file when set
  std::optional<int> rank;     // MPI rank, shown when the job has several
};

// Installs the process-wide logger (stderr, optionally a file). Throws std::invalid_argument on an
// unknown level name.
void init_logging(const LogOptions& options);

// Parses a level name ("info", "warn"...); throws std::invalid_argument naming the valid ones.
spdlog::level::level_enum parse_log_level(const std::string& name);

}  // namespace nmt
