#pragma once
// Helpers shared by the test files: a scratch directory per test, small file writers.

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

namespace nmt::testing {

// Built with ASan or TSan (GCC says so with __SANITIZE_*__, clang with __has_feature): then so are
// the tools a test starts, and their memory figures are the sanitizer's shadow as much as theirs.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif
#else
inline constexpr bool kSanitized = false;
#endif

// A fresh directory under the system temp dir, removed when the test ends.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::random_device seed;
    path_ = std::filesystem::temp_directory_path() /
            (std::string("nmt_") + (info ? info->name() : "test") + "_" + std::to_string(seed()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// The whole file; "" when it cannot be read.
inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A small tmpfs (mount's size=, e.g. "1m") on dir/small for a full-disk test, unmounted when this
// ends. Mounting needs root: where it is not allowed, mounted() is false and the test skips with
// skip_reason().
class SmallTmpfs {
 public:
  enum class Unmount { kExpectSuccess, kIgnoreFailure };

  SmallTmpfs(const TempDir& dir, const std::string& size, Unmount unmount)
      : point_(dir.file("small")),
        command_("mount -t tmpfs -o size=" + size + " nmt-test-tmpfs '" + point_ + "'"),
        unmount_(unmount) {
    std::filesystem::create_directories(point_);
    mounted_ = std::system((command_ + " 2> /dev/null").c_str()) == 0;
  }
  ~SmallTmpfs() {
    if (!mounted_) return;
    const int status = std::system(("umount '" + point_ + "'").c_str());
    if (unmount_ == Unmount::kExpectSuccess) {
      EXPECT_EQ(status, 0);
    }
  }
  SmallTmpfs(const SmallTmpfs&) = delete;
  SmallTmpfs& operator=(const SmallTmpfs&) = delete;

  bool mounted() const { return mounted_; }
  std::string skip_reason() const { return "cannot mount a tmpfs here (needs root): " + command_; }
  // Where it is mounted.
  const std::string& point() const { return point_; }

 private:
  std::string point_;
  std::string command_;
  Unmount unmount_;
  bool mounted_ = false;
};

// Expects `statement` to throw E whose message contains every one of `parts`.
#define NMT_EXPECT_THROW_WITH(statement, E, ...)                       \
  do {                                                                 \
    try {                                                              \
      statement;                                                       \
      ADD_FAILURE() << "expected " #E " from: " #statement;            \
    } catch (const E& e) {                                             \
      for (const std::string& part : {__VA_ARGS__}) {                  \
        EXPECT_NE(std::string(e.what()).find(part), std::string::npos) \
            << "message '" << e.what() << "' lacks '" << part << "'";  \
      }                                                                \
    }                                                                  \
  } while (0)

}  // namespace nmt::testing
