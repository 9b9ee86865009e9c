#pragma once
// What a path given to a tool may be (docs/formats.md, "Paths the tools read and write"). One
// owner for the rule, used by every whole-file read of an input and by the writers of outputs
// (common/atomic_file.h, the HDF5 writers):
// - An input read whole is a regular file (a link to one is followed) of at most a bound the
//   caller names: a device, a pipe or a link to nothing is an error naming the path and what it
//   is, and so is a file past the bound, before anything is read.
// - An output is a new file or a regular one, replaced whole; a link to a regular file or to
//   nothing is followed (the file it names is replaced or created, the link stays). Anything else
//   that exists (a directory, a device such as /dev/full or /dev/stdout, a pipe, a loop of links)
//   is refused, naming it: writing to the terminal or a pipe is what leaving --output out does,
//   where a tool offers it.

#include <cstdint>
#include <string>

namespace nmt {

// What is at a path, links followed.
enum class PathKind {
  kMissing,
  kRegular,
  kDirectory,
  kCharacterDevice,
  kBlockDevice,
  kPipe,
  kSocket,
  kOther,         // another kind of file
  kDanglingLink,  // a link to nothing
  kLinkLoop,      // a loop of symbolic links
  kUnreadable,    // stat failed otherwise (no permission)
};

PathKind path_kind(const std::string& path);

// What the file at `path` is, in words ("a directory", "a character device"...), following links;
// "missing" when nothing is there, "a link to nothing" for a dangling link, the error for
// kUnreadable.
std::string describe_path(const std::string& path);

// The contents of `path`, a regular file of at most `max_bytes` bytes; `what` names it in errors
// ("the config file"). Throws std::runtime_error naming the path otherwise.
std::string read_regular_file(const std::string& path, std::uint64_t max_bytes,
                              const std::string& what);

// Whether there is nothing to read at `path`: nothing there, or a link to nothing (a file yet to
// be created through it).
bool nothing_at(const std::string& path);

// The path to write an output at: `path` itself when nothing or a regular file is there, the file
// a link names when it is a link to a regular file or to nothing. Throws std::runtime_error naming
// the path and what it is for anything else.
std::string output_file_path(const std::string& path);

}  // namespace nmt
