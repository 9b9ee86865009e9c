#include "common/log.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <vector>

#include "common/append_file.h"

namespace nmt {
namespace {

// The log file: each line appended whole or not at all (AppendFile). A line that cannot be
// written is said once on stderr, naming the file and the cause (stderr has every line anyway),
// and so is the file becoming writable again.
class CheckedFileSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit CheckedFileSink(const std::string& path) : file_(with_parent(path)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t line;
    formatter_->format(msg, line);
    try {
      file_.append(std::string(line.data(), line.size()));
      if (lost_ > 0) {
        say(std::to_string(lost_) + " log lines could not be written to " + file_.path() +
            " (they are on stderr); it is written again\n");
        lost_ = 0;
      }
    } catch (const std::exception& e) {
      if (lost_++ == 0) {
        say(std::string("log file: ") + e.what() + "; lines go to stderr only until it can be " +
            "written again\n");
      }
    }
  }
  void flush_() override {}

 private:
  static const std::string& with_parent(const std::string& path) {
    const auto parent = std::filesystem::path(path).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent);
    return path;
  }
  static void say(const std::string& text) {
    const ssize_t ignored = ::write(STDERR_FILENO, text.data(), text.size());
    (void)ignored;
  }

  AppendFile file_;
  std::size_t lost_ = 0;
};

}  // namespace

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
    sinks.push_back(std::make_shared<CheckedFileSink>(options.file));
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
