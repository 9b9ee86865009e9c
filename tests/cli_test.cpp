// The command-line frame shared by every tool: exit codes for success, usage errors (one code, 2,
// whatever CLI11's own code for the error) and exceptions, and the logging flags.

#include "common/cli.h"

#include "test_utils.h"

namespace nmt {
namespace {

int run(std::vector<std::string> args, const std::function<int()>& body) {
  CLI::App app{"test tool", "nmt-test"};
  LogOptions log;
  log.tool = "nmt-test";
  int value = 0;
  std::string mode = "fast";
  app.add_option("--value", value);
  app.add_option("--mode", mode)->check(CLI::IsMember({"fast", "slow"}));
  app.add_option("--must", value)->excludes("--value");
  app.add_option("--level", mode)->check(parsed_by(parse_log_level));
  app.set_version_flag("--version", "nmt-test 1.0");
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
  EXPECT_EQ(run({}, []() -> int { throw std::invalid_argument("config: bad key"); }), 1);
  EXPECT_EQ(run({"--help"}, [] { return 9; }), 0);  // help exits 0 without running the body
  EXPECT_EQ(run({"--version"}, [] { return 9; }), 0);
}

// CLI11 has its own code for each kind of parse error (104 to 114 and more); every one is 2, as is
// a tool's own UsageError, and the body never runs.
TEST(Cli, EveryArgumentErrorExitsTwo) {
  bool ran = false;
  const auto body = [&ran] {
    ran = true;
    return 0;
  };
  EXPECT_EQ(run({"--no-such-flag"}, body), 2);               // ExtrasError
  EXPECT_EQ(run({"--value", "notanumber"}, body), 2);        // ConversionError
  EXPECT_EQ(run({"--value"}, body), 2);                      // ArgumentMismatch
  EXPECT_EQ(run({"--mode", "medium"}, body), 2);             // ValidationError
  EXPECT_EQ(run({"--value", "1", "--must", "2"}, body), 2);  // ExcludesError
  EXPECT_EQ(run({"--level", "loud"}, body), 2);  // the tool's own parser, run while parsing
  EXPECT_EQ(run({"stray"}, body), 2);            // ExtrasError (positional)
  EXPECT_FALSE(ran);
  EXPECT_EQ(run({}, []() -> int { throw UsageError("give --run-dir or --inputs"); }), 2);
  EXPECT_EQ(kExitUsage, 2);
  EXPECT_EQ(kExitFailure, 1);
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
