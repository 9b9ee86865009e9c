// Progress reporting: number formatting, rate and ETA lines through the logger, the heartbeat.

#include "common/progress.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <regex>
#include <sstream>
#include <string>
#include <thread>

#include "test_utils.h"

namespace nmt {
namespace {

// Captures what the default logger writes during the test; readable while another thread logs.
class CaptureLog {
 public:
  CaptureLog() : previous_(spdlog::default_logger()), sink_(std::make_shared<StringSink>()) {
    auto logger = std::make_shared<spdlog::logger>("capture", sink_);
    logger->set_pattern("%v");
    spdlog::set_default_logger(logger);
  }
  ~CaptureLog() { spdlog::set_default_logger(previous_); }
  std::string text() const { return sink_->text(); }

  // Waits until the text matches `pattern`, at most `limit`: a loaded machine may run a logging
  // thread late, and a test must not depend on how late.
  bool wait_for(const std::regex& pattern, std::chrono::milliseconds limit) const {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!std::regex_search(text(), pattern)) {
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return true;
  }

 private:
  class StringSink : public spdlog::sinks::base_sink<std::mutex> {
   public:
    std::string text() {
      std::lock_guard<std::mutex> lock(mutex_);
      return text_;
    }

   protected:
    void sink_it_(const spdlog::details::log_msg& message) override {
      spdlog::memory_buf_t formatted;
      formatter_->format(message, formatted);
      text_.append(formatted.data(), formatted.size());
    }
    void flush_() override {}

   private:
    std::string text_;
  };

  std::shared_ptr<spdlog::logger> previous_;
  std::shared_ptr<StringSink> sink_;
};

// "0:05", "1:02:03": what format_duration writes, whatever the duration.
const std::string kDuration = "[0-9]+(:[0-9]{2}){1,2}";

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
  // The ETA is 3x the time the sleep took, which a loaded machine can stretch: any duration.
  EXPECT_TRUE(std::regex_search(text, std::regex("pairs/s, 25\\.0% done, ETA " + kDuration)))
      << text;
  EXPECT_NE(text.find("encode train: 600 pairs,"), std::string::npos) << text;
  EXPECT_NE(text.find("encode train: done, 2,000 pairs"), std::string::npos) << text;
}

// A resumed job (3,000 of 9,000 steps done before this process): the rate counts this process's
// steps and the ETA its progress. 1 step in at least 20 ms is at most 50 steps/s, and 2/3 of the
// job left at 1/9000 per 20 ms is at least 2:00; counting the earlier steps as this process's would
// show over 100,000 steps/s and an ETA of a fraction of a second.
TEST(Progress, ResumedWorkCountsOnlyWhatThisProcessDid) {
  CaptureLog log;
  ProgressMeter meter("train", "steps", /*interval_seconds=*/0.0);
  meter.start_at(3000, 3000.0 / 9000.0);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  meter.update(3001, 3001.0 / 9000.0);
  const auto text = log.text();
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m,
                                std::regex("train: 3,001 steps, ([0-9.,]+) steps/s, 33\\.3% done, "
                                           "ETA ([0-9:]+)")))
      << text;
  std::string rate = m[1].str();
  rate.erase(std::remove(rate.begin(), rate.end(), ','), rate.end());
  EXPECT_LE(std::stod(rate), 50.0) << text;
  int eta_seconds = 0;  // "m:ss" or "h:mm:ss"
  std::stringstream eta(m[2].str());
  for (std::string part; std::getline(eta, part, ':');)
    eta_seconds = eta_seconds * 60 + std::stoi(part);
  EXPECT_GE(eta_seconds, 120) << text;
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
    EXPECT_TRUE(log.wait_for(std::regex("vocabulary training: running for " + kDuration),
                             std::chrono::seconds(30)))
        << log.text();
  }
  const auto after = log.text().size();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(log.text().size(), after);  // stopped with its owner
}

}  // namespace
}  // namespace nmt
