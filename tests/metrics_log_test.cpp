// The reader of a run directory's metrics.jsonl that nmt-tracker sync streams (and whose line
// parser the trainer's resume uses): batches in file
// order, null values kept as absent, a malformed line named by file and line only after the lines
// before it were returned, a torn last line (a trainer killed during a write) skipped.

#include "common/metrics_log.h"

#include <filesystem>

#include "test_utils.h"

namespace nmt {
namespace {

using testing::TempDir;

TEST(MetricsLogReader, ReadsBatchesInFileOrder) {
  TempDir dir;
  const auto path = dir.file("metrics.jsonl");
  testing::write_text(path,
                      "{\"step\": 1, \"key\": \"train/loss\", \"value\": 5.25, \"time\": 17.5}\n"
                      "\n"
                      "{\"step\": 1, \"key\": \"train/lr\", \"value\": null, \"time\": 17.5}\n"
                      "{\"step\": 2, \"key\": \"train/loss\", \"value\": 4}\n");
  MetricsLogReader reader(path);
  const auto first = reader.next_batch(2);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].key, "train/loss");
  EXPECT_EQ(first[0].step, 1);
  EXPECT_EQ(first[0].value, 5.25);
  EXPECT_EQ(first[0].time, 17.5);
  EXPECT_EQ(first[0].line, 1u);
  EXPECT_FALSE(first[1].value.has_value());
  EXPECT_EQ(first[1].line, 3u);  // the empty line counts
  const auto second = reader.next_batch(2);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].time, 0.0);
  EXPECT_TRUE(reader.next_batch(2).empty());
  EXPECT_EQ(reader.bytes_read(), reader.size());
}

TEST(MetricsLogReader, MalformedLineIsNamedAfterTheLinesBeforeIt) {
  TempDir dir;
  const auto path = dir.file("metrics.jsonl");
  testing::write_text(path,
                      "{\"step\": 1, \"key\": \"a\", \"value\": 1}\n"
                      "{\"step\": \"two\", \"key\": \"a\", \"value\": 2}\n"
                      "{\"step\": 3, \"key\": \"a\", \"value\": 3}\n");
  MetricsLogReader reader(path);
  EXPECT_EQ(reader.next_batch(10).size(), 1u);
  NMT_EXPECT_THROW_WITH(reader.next_batch(10), std::runtime_error, path + ":2",
                        std::string("step"));
  NMT_EXPECT_THROW_WITH(reader.next_batch(10), std::runtime_error, path + ":2");
}

TEST(MetricsLogReader, TornLastLineIsSkipped) {
  TempDir dir;
  const auto path = dir.file("metrics.jsonl");
  testing::write_text(path, "{\"step\": 1, \"key\": \"a\", \"value\": 1}\n{\"step\": 2, \"ke");
  MetricsLogReader reader(path);
  EXPECT_EQ(reader.next_batch(10).size(), 1u);
  EXPECT_TRUE(reader.next_batch(10).empty());
  NMT_EXPECT_THROW_WITH(MetricsLogReader(dir.file("absent.jsonl")), std::runtime_error,
                        "absent.jsonl");
}

// metrics.jsonl is a regular file of lines of about a hundred bytes: a link to an endless device
// is refused naming what it is, and an overlong line (a sparse file of zeros) is an error naming
// its line without being held in memory whole. Steps are from 0 to kMaxMetricStep.
TEST(MetricsLogReader, EndlessFilesOverlongLinesAndStepsOutOfRangeAreRefused) {
  TempDir dir;
  std::filesystem::create_symlink("/dev/zero", dir.file("zero.jsonl"));
  NMT_EXPECT_THROW_WITH(MetricsLogReader(dir.file("zero.jsonl")), std::runtime_error, "zero.jsonl",
                        "a character device, not a regular file");
  const auto path = dir.file("metrics.jsonl");
  testing::write_text(path, "{\"step\": 1, \"key\": \"a\", \"value\": 1}\n" +
                                std::string(kMaxMetricLineBytes + 10, ' ') + "\n");
  MetricsLogReader reader(path);
  EXPECT_EQ(reader.next_batch(10).size(), 1u);
  NMT_EXPECT_THROW_WITH(reader.next_batch(10), std::runtime_error, path + ":2",
                        std::string("longer than"));
  EXPECT_EQ(parse_metric_log_line(R"({"step": 9007199254740991, "key": "a", "value": 1})").step,
            kMaxMetricStep);
  for (const char* step : {"-1", "9007199254740992", "18446744073709551615"}) {
    NMT_EXPECT_THROW_WITH(
        parse_metric_log_line(std::string(R"({"key": "a", "value": 1, "step": )") + step + "}"),
        std::invalid_argument, "\"step\" must be from 0 to 9007199254740991");
  }
}

}  // namespace
}  // namespace nmt
