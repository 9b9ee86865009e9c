#pragma once
// Lines of a file descriptor in batches, as they arrive: a batch holds up to `max_lines` lines,
// fewer when no more input is waiting. On a file (or a pipe that is ahead) every batch is full,
// for throughput; on an interactive stream (a terminal, a pipe fed a line at a time) a batch ends
// with the last complete line received, so each line can be answered as soon as it is complete.
// Lines are split at '\n'; a trailing '\r' is dropped; a last line without '\n' counts.

#include <cstddef>
#include <string>
#include <vector>

namespace nmt {

class LineReader {
 public:
  // Reads `fd` (not owned, not closed); `name` names it in errors ("<stdin>", a path).
  LineReader(int fd, std::string name);

  // The next lines: at least one unless the input has ended (then none). Blocks only while it has
  // no complete line yet. Throws std::runtime_error naming the input when a read fails.
  std::vector<std::string> next_batch(std::size_t max_lines);

 private:
  bool input_waiting() const;  // a read would not block
  void read_some();            // one read(2); sets eof_ at the end

  int fd_;
  std::string name_;
  std::string buffer_;
  std::size_t start_ = 0;  // unread part of buffer_ begins here
  bool eof_ = false;
};

}  // namespace nmt
