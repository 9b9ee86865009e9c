#pragma once
// The output directory of nmt-preprocess and its life cycle. A run builds everything in a
// temporary directory beside the output, OUT.tmp-PID, and publishes it with renames at the end;
// any failure or stop removes the temporary directory, so nothing half-written is ever seen under
// OUT. With --overwrite the previous output is renamed to OUT.old-PID, the new one renamed in and
// only then the old one removed, so a failure keeps the previous output.
//
// --overwrite replaces only what is recognisably a previous preprocessing output: a directory
// whose manifest reads and which holds nothing but the manifest, the vocabulary and the shards the
// manifest lists. Anything else (no manifest, an unreadable one, another file or a subdirectory)
// is refused, naming the directory and why; nmt-preprocess never deletes files it did not write.

#include <filesystem>
#include <string>

namespace nmt::preprocess {

// `out` as an absolute, normalised path without a trailing separator.
std::filesystem::path output_path(const std::string& out);

// Throws std::runtime_error, naming `out` and the reason, unless `out` may be replaced by
// --overwrite (see the file comment). `out` must exist.
void check_replaceable(const std::filesystem::path& out);

// Leftovers of earlier runs that died (SIGKILL, a crash, a second Ctrl-C): OUT.tmp-PID and
// OUT.old-PID directories whose process PID no longer exists on this machine. A temporary
// directory that holds only files a preprocessing run writes is removed (logged); an old output
// is removed when OUT is in place, else kept and reported (it is the only copy of the previous
// output: rename it back to OUT). Anything else is reported and left alone.
void clean_stale_leftovers(const std::filesystem::path& out);

// The temporary directory of this run, OUT.tmp-PID, removed on destruction unless published.
class TempOutputDir {
 public:
  explicit TempOutputDir(const std::filesystem::path& out);
  ~TempOutputDir();
  TempOutputDir(const TempOutputDir&) = delete;
  TempOutputDir& operator=(const TempOutputDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // Renames the finished directory to `out` (the swap above when `out` exists and `overwrite`;
  // `out` is checked again with check_replaceable first). Throws naming the paths on failure,
  // with the previous output back in place.
  void publish(const std::filesystem::path& out, bool overwrite);

 private:
  std::filesystem::path path_;
  bool published_ = false;
};

}  // namespace nmt::preprocess
