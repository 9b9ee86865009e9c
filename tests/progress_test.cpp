// Progress reporting: number formatting, rate and ETA lines through the logger, the heartbeat.

#include "common/progress.h"

#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <sstream>
#include <thread>

#include "test_utils.h"

namespace nmt {
namespace {

// Captures what the default logger writes during the test.
class CaptureLog {
 public:
  CaptureLog() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(text_);
    auto logger = std::make_shared<spdlog::logger>("capture", sink);
    logger->set_pattern("%v");
    spdlog::set_default_logger(logger);
  }
  ~CaptureLog() { spdlog::set_default_logger(previous_); }
  std::string text() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST(Progress, Formatting) {
  EXPECT_EQ(with_thousands(0), "0");
  EXPECT_EQ(with_thousands(999), "999");
  EXPECT_EQ(with_thousands(1234567), "1,234,567");
  EXPECT_EQ(with_thousands(-1000), "-1,000");
  EXPECT_EQ(format_duration(5), "0:05");
  EXPECT_EQ(format_rate(0.4213), "0.42");
  EXPECT_EQ(format_rate(12345.6), "12,345");
  EXPECT_EQ(format_duration(3723), "1:02:03");
}

TEST(Progress, LinesCarryRateAndEta) {
  CaptureLog log;
  ProgressMeter meter("encode train", "pairs", /*interval_seconds=*/0.0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  meter.update(500, 0.25);
  meter.update(600);  // unknown fraction: no ETA
  meter.finish(2000);
  const auto text = log.text();
  EXPECT_NE(text.find("encode train: 500 pairs,"), std::string::npos) << text;
  EXPECT_NE(text.find("pairs/s, 25.0% done, ETA 0:00"), std::string::npos) << text;
  EXPECT_NE(text.find("encode train: 600 pairs,"), std::string::npos) << text;
  EXPECT_NE(text.find("encode train: done, 2,000 pairs"), std::string::npos) << text;
}

TEST(Progress, UpdatesAreRateLimited) {
  CaptureLog log;
  ProgressMeter meter("clean", "lines", /*interval_seconds=*/3600.0);
  for (int i = 0; i < 1000; ++i) meter.update(i, 0.5);
  EXPECT_EQ(log.text(), "");
}

TEST(Progress, HeartbeatLogsUntilDestroyed) {
  CaptureLog log;
  {
    Heartbeat heartbeat("vocabulary training", /*interval_seconds=*/0.01);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const auto lines = log.text();
  EXPECT_NE(lines.find("vocabulary training: running for 0:00"), std::string::npos) << lines;
  const auto after = lines.size();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(log.text().size(), after);  // stopped with its owner
}

}  // namespace
}  // namespace nmt
