#pragma once
// One owner per directory at a time: an advisory lock (flock) on DIR/run.lock, which the kernel
// releases when the holder's process ends in any way (a SIGKILL included), so it is never left
// held. The file records the holder (host, pid, tool, since when) for the error a second process
// gets; the file itself stays, and its presence means nothing.
// File systems: local ones and NFSv4 (Linux emulates flock with a byte-range lock the server
// arbitrates between clients; a lock of a client that crashed is released when its lease expires,
// 90 s by default) hold it across the nodes of a job. Lustre holds it across nodes only when
// mounted with -o flock (-o localflock: per node only); without either, and on any file system
// that refuses locks, the lock is not taken: a warning says that a second process on the
// directory would then go unnoticed.

#include <stdexcept>
#include <string>

namespace nmt {

// Another process holds the lock: what() names the directory and the holder.
class DirectoryBusy : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class DirectoryLock {
 public:
  // Creates `dir` when missing and takes its lock for `tool`, at once or not at all: throws
  // DirectoryBusy when another process holds it, std::runtime_error naming the file on any other
  // failure.
  DirectoryLock(const std::string& dir, const std::string& tool);
  ~DirectoryLock();
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

  // False where the file system refused the lock (warned): nothing keeps a second process out.
  bool held() const { return held_; }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  bool held_ = false;
};

}  // namespace nmt
