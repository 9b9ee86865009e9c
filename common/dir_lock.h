#pragma once
// One owner per run directory at a time: the directory itself is locked (common/owner_lock.h),
// so deleting RUN/run.lock, the record that names the holder, lets no second trainer in. What
// holds on NFS and Lustre is owner_lock.h's.

#include <string>

#include "common/owner_lock.h"

namespace nmt {

// Another process holds the directory: what() names the directory and the holder.
using DirectoryBusy = OwnerBusy;

class DirectoryLock {
 public:
  // Creates `dir` when missing and takes its lock for `tool`, at once or not at all: throws
  // DirectoryBusy when another process holds it, std::runtime_error naming the file on any other
  // failure. A holder that died without releasing it is taken over with a log line.
  DirectoryLock(const std::string& dir, const std::string& tool);

  // False where the file system refused the lock (warned): nothing keeps a second process out.
  bool held() const { return lock_.held(); }
  // The record naming the holder.
  const std::string& path() const { return lock_.record_path(); }

 private:
  OwnerLock lock_;
};

}  // namespace nmt
