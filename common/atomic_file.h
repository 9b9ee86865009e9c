#pragma once
// Files that are never seen half-written: write to a temporary name beside the target, fsync,
// rename over the target, fsync the directory. Used for models, configs and port files.

#include <cstddef>
#include <string>

namespace nmt {

// Throws std::runtime_error naming the path on any failure; the target is then untouched. The path
// is checked as an output (common/checked_paths.h): a link to a regular file writes that file,
// anything else but a regular file is refused.
void write_file_atomically(const std::string& path, const std::string& contents);
void write_file_atomically(const std::string& path, const void* data, std::size_t size);

// fsyncs an existing file or directory (after an HDF5 file is closed, before it is renamed).
void fsync_path(const std::string& path);

}  // namespace nmt
