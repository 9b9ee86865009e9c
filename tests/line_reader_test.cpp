// LineReader (common/line_reader.h) on real pipes and files: a batch ends with the lines already
// received (nothing waits for input that has not come), files give full batches, the last line
// without a newline counts, '\r' is dropped, a line longer than one read stays whole.

#include "common/line_reader.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "tests/test_utils.h"

namespace nmt {
namespace {

using Lines = std::vector<std::string>;

void write_all(int fd, const std::string& text) {
  ASSERT_EQ(::write(fd, text.data(), text.size()), static_cast<ssize_t>(text.size()));
}

TEST(LineReader, APipeBatchEndsWithTheLinesReceived) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  LineReader reader(fds[0], "<pipe>");
  write_all(fds[1], "a\nb\r\nc");
  // "c" is not complete and nothing more is waiting: the batch is the two whole lines.
  EXPECT_EQ(reader.next_batch(100), (Lines{"a", "b"}));
  write_all(fds[1], "\n\nd");
  EXPECT_EQ(reader.next_batch(1), (Lines{"c"}));
  EXPECT_EQ(reader.next_batch(100), (Lines{""}));  // an empty line is a line
  ::close(fds[1]);
  EXPECT_EQ(reader.next_batch(100), (Lines{"d"}));  // the last line, ended by the end of input
  EXPECT_TRUE(reader.next_batch(100).empty());
  EXPECT_TRUE(reader.next_batch(100).empty());
  ::close(fds[0]);
}

TEST(LineReader, AFileGivesFullBatchesAndLongLinesStayWhole) {
  testing::TempDir dir;
  const std::string path = dir.file("in.txt");
  std::string text;
  for (int i = 0; i < 2500; ++i) text += "line " + std::to_string(i) + "\n";
  const std::string long_line(200000, 'x');
  text += long_line + "\nlast";
  testing::write_text(path, text);
  const int fd = ::open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  LineReader reader(fd, path);
  std::vector<std::size_t> sizes;
  Lines all;
  for (Lines batch; !(batch = reader.next_batch(1000)).empty();) {
    sizes.push_back(batch.size());
    all.insert(all.end(), batch.begin(), batch.end());
  }
  ::close(fd);
  EXPECT_EQ(sizes, (std::vector<std::size_t>{1000, 1000, 502}));
  ASSERT_EQ(all.size(), 2502u);
  EXPECT_EQ(all[0], "line 0");
  EXPECT_EQ(all[2499], "line 2499");
  EXPECT_EQ(all[2500], long_line);
  EXPECT_EQ(all[2501], "last");
}

TEST(LineReader, AFailedReadNamesTheInput) {
  LineReader reader(-1, "input.txt");
  try {
    reader.next_batch(10);
    ADD_FAILURE() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read input.txt"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nmt
