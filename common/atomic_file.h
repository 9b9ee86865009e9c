#pragma once
// Files that are never seen half-written: write to a temporary name beside the target, fsync,
// rename over the target, fsync the directory. Used for models, configs and port files, and by the
// streamed HDF5 writer (common/hdf5_streaming.h) for checkpoints and shards.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace nmt {

// One atomic write in progress: the temporary (atomic_temporary_path) is created by the
// constructor and written; commit() fsyncs it, renames it over the target and fsyncs the target's
// folder. Removed unless committed. Every failure throws std::runtime_error naming the file, with
// errno's text; the target is then untouched. The target is checked as an output
// (common/checked_paths.h): a link to a regular file writes that file, anything else but a regular
// file is refused.
class AtomicFileWriter {
 public:
  explicit AtomicFileWriter(const std::string& target);
  ~AtomicFileWriter();
  AtomicFileWriter(const AtomicFileWriter&) = delete;
  AtomicFileWriter& operator=(const AtomicFileWriter&) = delete;

  // Allocates the file's blocks now, so that a full disk shows before anything is written; file
  // systems without fallocate get their blocks as the writes come.
  void reserve(std::uint64_t size);
  void write_at(const void* data, std::size_t size, std::uint64_t offset);
  void append(const void* data, std::size_t size);
  // Sets the size to `size` when given (after reserve()), then fsync, rename, folder fsync.
  void commit(std::optional<std::uint64_t> size = std::nullopt);

  const std::string& target() const { return target_; }
  const std::string& temporary() const { return temporary_; }

 private:
  std::string target_, temporary_;
  int fd_ = -1;
  std::uint64_t end_ = 0;  // where append() writes
  bool committed_ = false;
};

// The temporary that an atomic write of `path` by process `pid` writes before renaming it over
// `path`: PATH.tmp.PID.
std::string atomic_temporary_path(const std::string& path, long pid);

// A temporary's file name taken apart: the name it is renamed to and the process writing it.
struct AtomicTemporary {
  std::string target;
  long pid = 0;
};
// nullopt for a file name that is not NAME.tmp.PID.
std::optional<AtomicTemporary> parse_atomic_temporary(const std::string& file_name);

// Throws std::runtime_error naming the path on any failure; the target is then untouched. The path
// is checked as an output (common/checked_paths.h): a link to a regular file writes that file,
// anything else but a regular file is refused.
void write_file_atomically(const std::string& path, const std::string& contents);
void write_file_atomically(const std::string& path, const void* data, std::size_t size);

// fsyncs an existing file or directory (after an HDF5 file is closed, before it is renamed).
void fsync_path(const std::string& path);

}  // namespace nmt
