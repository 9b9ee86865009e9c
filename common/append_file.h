#pragma once
// A file that grows by whole records or not at all: the logs, metrics.jsonl and the tracker spool
// of a run. Each append is one write loop; when it fails (a full disk, a quota, an I/O error) the
// file is cut back to its size before the append, so no half line is ever left for a later append
// to glue onto, and the error names the file and the cause.

#include <string>

namespace nmt {

class AppendFile {
 public:
  // Opens (creating) `path` for appending. Throws std::runtime_error naming the path and the cause.
  explicit AppendFile(std::string path);
  ~AppendFile();
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  // Appends `data` whole, or leaves the file as it was and throws std::runtime_error
  // "PATH: cannot append N bytes: CAUSE".
  void append(const std::string& data);
  // fdatasync: what was appended survives a crash of the machine, not only of the process.
  void sync();

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace nmt
