// The command-line frame shared by every tool: exit codes for success, usage errors and
// exceptions, and the logging flags.

#include "common/cli.h"

#include "test_utils.h"

namespace nmt {
namespace {

int run(std::vector<std::string> args, const std::function<int()>& body) {
  CLI::App app{"test tool", "nmt-test"};
  LogOptions log;
  log.tool = "nmt-test";
  int value = 0;
  app.add_option("--value", value);
  add_logging_flags(app, log);
  std::vector<char*> argv;
  args.insert(args.begin(), "nmt-test");
  for (auto& a : args) argv.push_back(a.data());
  return run_tool(app, log, static_cast<int>(argv.size()), argv.data(), body);
}

TEST(Cli, ExitCodes) {
  EXPECT_EQ(run({"--value", "3"}, [] { return 0; }), 0);
  EXPECT_EQ(run({}, [] { return 4; }), 4);
  EXPECT_EQ(run({}, []() -> int { throw std::runtime_error("shard.h5: truncated"); }), 1);
  EXPECT_NE(run({"--value", "notanumber"}, [] { return 0; }), 0);
  EXPECT_NE(run({"--no-such-flag"}, [] { return 0; }), 0);
  EXPECT_EQ(run({"--help"}, [] { return 9; }), 0);  // help exits 0 without running the body
}

TEST(Cli, LogLevelsAreValidated) {
  EXPECT_EQ(run({"--log-level", "debug"}, [] { return 0; }), 0);
  EXPECT_EQ(spdlog::default_logger()->level(), spdlog::level::debug);
  EXPECT_EQ(run({"--log-level", "chatty"}, [] { return 0; }), 2);
  EXPECT_THROW(parse_log_level("verbose"), std::invalid_argument);
  EXPECT_EQ(parse_log_level("off"), spdlog::level::off);
}

TEST(Cli, LogFileReceivesLines) {
  testing::TempDir dir;
  const auto path = dir.file("tool.log");
  EXPECT_EQ(run({"--log-file", path},
                [] {
                  spdlog::warn("checkpoint {} written", 42);
                  return 0;
                }),
            0);
  spdlog::default_logger()->flush();
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("checkpoint 42 written"), std::string::npos);
  EXPECT_NE(text.find("[nmt-test]"), std::string::npos);
}

}  // namespace
}  // namespace nmt
