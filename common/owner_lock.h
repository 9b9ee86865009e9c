#pragma once
// One owner at a time of something on disk (a run directory, a tracker database): an advisory
// lock (flock) on the thing itself, the directory or the file, which nobody can delete out from
// under its holder, and which the kernel releases when the holder's process ends in any way (a
// SIGKILL included). A record file beside it names the holder (tool, pid, host, since, state) for
// the error a second process gets; deleting the record changes nothing but that error's words.
// A holder that ends cleanly empties its record; a record still full when the lock is taken is
// the word of a holder that died, and its successor says so in the log ("taking over").
//
// File systems: local ones hold the lock on a directory and on a file. NFSv4 emulates flock with
// a byte-range lock the server arbitrates between clients, on files only (a client that crashed
// loses its locks when its lease expires, 90 s by default); where a directory cannot be locked,
// the record file is locked instead, with a warning that deleting it would then let a second
// process in. Lustre holds locks across nodes only when mounted with -o flock (-o localflock:
// per node only); a file system that refuses locks altogether leaves the lock not taken, with a
// warning that a second process would go unnoticed.

#include <chrono>
#include <stdexcept>
#include <string>

namespace nmt {

// Another process holds the lock: what() names the thing, the holder and what to do.
class OwnerBusy : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OwnerLockSpec {
  std::string anchor;  // the directory or file locked; must exist
  std::string record;  // the file naming the holder
  std::string what;    // the thing in words, for messages: "run directory runs/x"
  std::string tool;    // the holder's name in the record
  std::string advice;  // the end of a second process's error: what it can do
  // A holder whose record says it is stopping, or that is ending on this host (a zombie, a
  // SIGKILL, SIGTERM or SIGINT not acted on yet), is waited for this long before the error.
  std::chrono::milliseconds wait_for_stopping{0};
  // Any other holder is given this long to let go (one acting on a signal just received).
  std::chrono::milliseconds grace{0};
  unsigned record_mode = 0644;  // of a record file created here
};

class OwnerLock {
 public:
  // Takes the lock, or throws OwnerBusy naming the holder once the waits of the spec are over (a
  // holder that has not written its record yet: a second); std::runtime_error naming the file on
  // any other failure.
  explicit OwnerLock(const OwnerLockSpec& spec);
  // Empties the record, then releases the lock.
  ~OwnerLock();
  OwnerLock(const OwnerLock&) = delete;
  OwnerLock& operator=(const OwnerLock&) = delete;

  // The record says the holder is stopping: a successor started now waits for it to end.
  void mark_stopping();

  // False where the file system refused every lock (warned): nothing keeps a second process out.
  bool held() const { return held_; }
  const std::string& record_path() const { return spec_.record; }

 private:
  void write_record(const std::string& state);

  OwnerLockSpec spec_;
  int anchor_fd_ = -1;  // holds the lock where the anchor takes one
  int record_fd_ = -1;  // holds it otherwise
  bool held_ = false;
  std::string since_;
};

}  // namespace nmt
