#include "common/line_reader.h"

#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace nmt {

LineReader::LineReader(int fd, std::string name) : fd_(fd), name_(std::move(name)) {}

bool LineReader::input_waiting() const {
  pollfd p{fd_, POLLIN, 0};
  int ready;
  do {
    ready = ::poll(&p, 1, 0);
  } while (ready < 0 && errno == EINTR);
  // POLLHUP without data: the writer is gone, and the next read returns 0 at once.
  return ready > 0 && (p.revents & (POLLIN | POLLHUP | POLLERR)) != 0;
}

void LineReader::read_some() {
  if (start_ > 0 && start_ * 2 >= buffer_.size()) {  // keep the buffer from growing for ever
    buffer_.erase(0, start_);
    start_ = 0;
  }
  char chunk[1 << 16];
  ssize_t n;
  do {
    n = ::read(fd_, chunk, sizeof(chunk));
  } while (n < 0 && errno == EINTR);
  if (n < 0) {
    throw std::runtime_error(fmt::format("cannot read {}: {}", name_, std::strerror(errno)));
  }
  if (n == 0) {
    eof_ = true;
  } else {
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

std::vector<std::string> LineReader::next_batch(std::size_t max_lines) {
  std::vector<std::string> lines;
  while (lines.size() < max_lines) {
    const std::size_t newline = buffer_.find('\n', start_);
    if (newline != std::string::npos) {
      std::string line = buffer_.substr(start_, newline - start_);
      if (!line.empty() && line.back() == '\r') line.pop_back();
      lines.push_back(std::move(line));
      start_ = newline + 1;
      continue;
    }
    if (eof_) {
      if (start_ < buffer_.size()) {  // a last line without its newline
        std::string line = buffer_.substr(start_);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        lines.push_back(std::move(line));
        start_ = buffer_.size();
      }
      break;
    }
    // No complete line buffered: wait for one only while the batch is empty.
    if (!lines.empty() && !input_waiting()) break;
    read_some();
  }
  return lines;
}

}  // namespace nmt
