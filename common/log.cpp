#include "common/log.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <memory>
#include <stdexcept>
#include <vector>

namespace nmt {

spdlog::level::level_enum parse_log_level(const std::string& name) {
  const auto level = spdlog::level::from_str(name);
  // from_str maps anything it does not know to "off"; only "off" itself may mean off.
  if (level == spdlog::level::off && name != "off") {
    throw std::invalid_argument("unknown log level '" + name +
                                "' (expected trace, debug, info, warn, error, critical or off)");
  }
  return level;
}

void init_logging(const LogOptions& options) {
  const auto level = parse_log_level(options.level);
  std::vector<spdlog::sink_ptr> sinks;
  sinks.push_back(std::make_shared<spdlog::sinks::stderr_color_sink_mt>());
  if (!options.file.empty()) {
    sinks.push_back(std::make_shared<spdlog::sinks::basic_file_sink_mt>(options.file));
  }
  auto logger = std::make_shared<spdlog::logger>(options.tool, sinks.begin(), sinks.end());
  std::string name = options.tool;
  if (options.rank) name += ":" + std::to_string(*options.rank);
  logger->set_pattern("[%Y-%m-%d %H:%M:%S.%e] [" + name + "] [%^%l%$] %v");
  logger->set_level(level);
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(std::move(logger));
}

}  // namespace nmt
