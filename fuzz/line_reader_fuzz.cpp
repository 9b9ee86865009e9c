// Fuzz harness: common/line_reader.h, how nmt-translate reads its input lines, over any bytes in a
// file. The first byte sets the batch size (1 to 16 lines). Checked: the lines are the input split
// at '\n', each less a trailing '\r', with a last line without '\n' counted; no line is lost,
// split or made up.

#include <fcntl.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/line_reader.h"
#include "fuzz/fuzz_input.h"

namespace {

// The lines LineReader promises for `text`.
std::vector<std::string> expected_lines(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string line(text.substr(0, end));
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const std::size_t batch = 1 + data[0] % 16;
  const std::string_view text = nmt::fuzz::as_text(data + 1, size - 1);
  const std::string path = nmt::fuzz::scratch().write("input.txt", text);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) nmt::fuzz::finding("cannot open " + path);
  std::vector<std::string> lines;
  {
    nmt::LineReader reader(fd, path);
    for (;;) {
      const std::vector<std::string> got = reader.next_batch(batch);
      if (got.empty()) break;
      if (got.size() > batch) nmt::fuzz::finding("a batch holds more lines than asked for");
      lines.insert(lines.end(), got.begin(), got.end());
    }
  }
  ::close(fd);
  if (lines != expected_lines(text)) nmt::fuzz::finding("the lines read differ from the input's");
  return 0;
}
