// The files a run owns and appends to: whole records or nothing, and one owner at a time.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "common/append_file.h"
#include "common/dir_lock.h"
#include "common/log.h"
#include "test_utils.h"

namespace nmt {
namespace {

using testing::TempDir;

// /dev/full answers every write with ENOSPC, as a full disk does.
TEST(AppendFile, AFailedAppendNamesTheFileAndTheCause) {
  AppendFile full("/dev/full");
  NMT_EXPECT_THROW_WITH(full.append("{\"step\": 1}\n"), std::runtime_error, "/dev/full",
                        "No space left on device");
}

// The log file on a full disk (/dev/full): the failure is said on stderr, naming the file and the
// cause, once, and logging goes on.
TEST(LogFile, AFailedLineIsNamedOnStderrOnce) {
  LogOptions options;
  options.tool = "log-test";
  options.file = "/dev/full";
  init_logging(options);
  ::testing::internal::CaptureStderr();
  spdlog::info("first line");
  spdlog::info("second line");
  const std::string err = ::testing::internal::GetCapturedStderr();
  init_logging(LogOptions());
  EXPECT_NE(err.find("second line"), std::string::npos) << err;
  const auto at = err.find("log file: /dev/full: cannot append");
  EXPECT_NE(at, std::string::npos) << err;
  EXPECT_NE(err.find("No space left on device"), std::string::npos) << err;
  EXPECT_EQ(err.find("log file: /dev/full", at + 1), std::string::npos) << "said once: " << err;
}

TEST(AppendFile, AppendsWholeRecords) {
  TempDir dir;
  const std::string path = dir.file("log.jsonl");
  {
    AppendFile file(path);
    file.append("a\n");
    file.append("");
    file.append("b\n");
    file.sync();
  }
  AppendFile again(path);
  again.append("c\n");
  std::ifstream in(path);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "a\nb\nc\n");
}

// A child holding `run`'s lock as "holder" until it is killed; its pid once it holds it.
pid_t fork_holder(const std::string& run) {
  int ready[2];
  if (::pipe(ready) != 0) return -1;
  const pid_t child = ::fork();
  if (child == 0) {
    DirectoryLock lock(run, "holder");
    const char ok = 'k';
    if (::write(ready[1], &ok, 1) != 1) ::_exit(2);
    ::pause();
    ::_exit(0);
  }
  char got = 0;
  const bool held = child > 0 && ::read(ready[0], &got, 1) == 1;
  ::close(ready[0]);
  ::close(ready[1]);
  return held ? child : -1;
}

void kill_and_reap(pid_t child) {
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
}

// The lock is the kernel's: a second holder is refused naming the first, and a SIGKILLed holder
// leaves it free.
TEST(DirectoryLock, OneHolderAtATimeAndAKilledHolderFreesIt) {
  TempDir dir;
  const std::string run = dir.file("run");
  const pid_t child = fork_holder(run);
  ASSERT_GT(child, 0);
  NMT_EXPECT_THROW_WITH(DirectoryLock(run, "second"), DirectoryBusy, run, std::string("holder"),
                        "pid " + std::to_string(child), std::string("since"));
  kill_and_reap(child);
  DirectoryLock after(run, "third");
  EXPECT_TRUE(after.held());
  // In one process too: every open of the directory is a holder of its own.
  NMT_EXPECT_THROW_WITH(DirectoryLock(run, "fourth"), DirectoryBusy, "third");
}

// The record is not the lock: with it deleted, the directory is still held, and the refusal says
// the record is gone.
TEST(DirectoryLock, DeletingTheRecordLetsNoSecondHolderIn) {
  TempDir dir;
  const std::string run = dir.file("run");
  const pid_t child = fork_holder(run);
  ASSERT_GT(child, 0);
  ASSERT_TRUE(std::filesystem::remove(run + "/run.lock"));
  NMT_EXPECT_THROW_WITH(DirectoryLock(run, "second"), DirectoryBusy, run,
                        std::string("has not recorded itself"));
  kill_and_reap(child);
  DirectoryLock after(run, "third");
  EXPECT_TRUE(after.held());
}

// A holder that died leaves its record full: the next holder says whom it takes over from. One
// that released the lock leaves it empty: nothing is said.
TEST(DirectoryLock, AHolderThatDiedIsTakenOverWithALogLine) {
  TempDir dir;
  const std::string run = dir.file("run");
  const pid_t child = fork_holder(run);
  ASSERT_GT(child, 0);
  kill_and_reap(child);
  init_logging(LogOptions());  // the tools' logger, on stderr
  ::testing::internal::CaptureStderr();
  { DirectoryLock after(run, "second"); }
  const std::string taken = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(taken.find("taking over from holder (pid " + std::to_string(child)), std::string::npos)
      << taken;
  ::testing::internal::CaptureStderr();
  { DirectoryLock again(run, "third"); }
  const std::string released = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(released.find("taking over"), std::string::npos) << released;
}

}  // namespace
}  // namespace nmt
