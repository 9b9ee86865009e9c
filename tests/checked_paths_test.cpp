// Paths that are not what they seem (common/checked_paths.h): an input read whole is a regular
// file within its bound, an output is a new or a regular file; a device, a pipe, a directory or a
// link to one of them is refused naming it, and nothing is written over it. The writers of every
// tool (write_file_atomically, the HDF5 writers) take the rule from there.

#include "common/checked_paths.h"

#include <sys/stat.h>

#include <filesystem>
#include <string>

#include "common/atomic_file.h"
#include "common/hdf5_file.h"
#include "test_utils.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::write_text;

bool is_character_device(const std::string& path) {
  struct stat info {};
  return ::lstat(path.c_str(), &info) == 0 && S_ISCHR(info.st_mode);
}

TEST(CheckedPaths, InputsReadWholeAreRegularFilesWithinTheirBound) {
  TempDir dir;
  write_text(dir.file("a.txt"), "twelve bytes");
  EXPECT_EQ(read_regular_file(dir.file("a.txt"), 12, "the input"), "twelve bytes");
  fs::create_symlink(dir.file("a.txt"), dir.file("link.txt"));
  EXPECT_EQ(read_regular_file(dir.file("link.txt"), 100, "the input"), "twelve bytes");
  NMT_EXPECT_THROW_WITH(read_regular_file(dir.file("a.txt"), 11, "the input"), std::runtime_error,
                        "a.txt", "the input is 12 bytes, over the limit of 11 bytes");
  fs::create_symlink("/dev/zero", dir.file("zero"));
  NMT_EXPECT_THROW_WITH(read_regular_file(dir.file("zero"), 1 << 20, "the input"),
                        std::runtime_error, "zero", "a character device, not a regular file");
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
  NMT_EXPECT_THROW_WITH(read_regular_file(dir.file("fifo"), 1 << 20, "the input"),
                        std::runtime_error, "fifo", "a pipe, not a regular file");
  NMT_EXPECT_THROW_WITH(read_regular_file(dir.path().string(), 1 << 20, "the input"),
                        std::runtime_error, "a directory, not a regular file");
  NMT_EXPECT_THROW_WITH(read_regular_file(dir.file("absent"), 1, "the input"), std::runtime_error,
                        "absent", "cannot open the input");
  fs::create_symlink("loop2", dir.file("loop1"));
  fs::create_symlink("loop1", dir.file("loop2"));
  NMT_EXPECT_THROW_WITH(read_regular_file(dir.file("loop1"), 1, "the input"), std::runtime_error,
                        "loop1", "a loop of symbolic links");
  EXPECT_EQ(describe_path(dir.file("loop1")), "a loop of symbolic links");
  fs::create_symlink(dir.file("absent"), dir.file("dangling"));
  EXPECT_EQ(describe_path(dir.file("dangling")), "a link to nothing");
  EXPECT_EQ(describe_path(dir.file("absent")), "missing");
}

// /dev/full once became a regular file: the temporary was renamed over the device node.
TEST(CheckedPaths, AnOutputThatIsNoRegularFileIsRefusedAndLeftAsItWas) {
  TempDir dir;
  fs::create_symlink("/dev/full", dir.file("full"));
  NMT_EXPECT_THROW_WITH(write_file_atomically(dir.file("full"), "text"), std::runtime_error, "full",
                        "a link to a character device", "nothing was written");
  EXPECT_TRUE(fs::is_symlink(dir.file("full")));
  ASSERT_TRUE(is_character_device("/dev/full"));
  // The device itself is only asked about: a regression must not replace the machine's /dev/full.
  NMT_EXPECT_THROW_WITH(output_file_path("/dev/full"), std::runtime_error, "/dev/full",
                        "a character device");
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
  NMT_EXPECT_THROW_WITH(output_file_path(dir.file("fifo")), std::runtime_error, "a pipe");
  fs::create_directory(dir.file("folder"));
  NMT_EXPECT_THROW_WITH(write_file_atomically(dir.file("folder"), "text"), std::runtime_error,
                        "a directory");
  fs::create_symlink("loop2", dir.file("loop1"));
  fs::create_symlink("loop1", dir.file("loop2"));
  NMT_EXPECT_THROW_WITH(output_file_path(dir.file("loop1")), std::runtime_error,
                        "a loop of symbolic links");
  // A link to nothing: the file it names is created, the link stays.
  fs::create_symlink("created.txt", dir.file("dangling"));
  write_file_atomically(dir.file("dangling"), "made");
  EXPECT_TRUE(fs::is_symlink(dir.file("dangling")));
  EXPECT_EQ(read_regular_file(dir.file("created.txt"), 100, "the output"), "made");
  // A link to a regular file: the file is replaced, the link stays.
  write_text(dir.file("real.txt"), "old");
  fs::create_symlink("real.txt", dir.file("link.txt"));
  write_file_atomically(dir.file("link.txt"), "new");
  EXPECT_TRUE(fs::is_symlink(dir.file("link.txt")));
  EXPECT_EQ(read_regular_file(dir.file("real.txt"), 100, "the output"), "new");
  // New and regular files are written.
  write_file_atomically(dir.file("new.txt"), "a");
  write_file_atomically(dir.file("new.txt"), "b");
  EXPECT_EQ(read_regular_file(dir.file("new.txt"), 100, "the output"), "b");
}

// The HDF5 writers (checkpoints, averaged models, shards) take the same rule.
TEST(CheckedPaths, Hdf5OutputsTakeTheSameRule) {
  TempDir dir;
  fs::create_symlink("/dev/full", dir.file("full.h5"));
  Hdf5Writer h5(dir.file("image.h5"));
  h5.set_attribute("/", "format", std::string("test"));
  NMT_EXPECT_THROW_WITH(h5.save(dir.file("full.h5")), std::runtime_error, "full.h5",
                        "a link to a character device");
  EXPECT_TRUE(fs::is_symlink(dir.file("full.h5")));
  EXPECT_TRUE(is_character_device("/dev/full"));
}

}  // namespace
}  // namespace nmt
