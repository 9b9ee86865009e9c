// The files a run owns and appends to: whole records or nothing, and one owner at a time.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

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

// The lock is the kernel's: a second holder is refused naming the first, and a SIGKILLed holder
// leaves it free.
TEST(DirectoryLock, OneHolderAtATimeAndAKilledHolderFreesIt) {
  TempDir dir;
  const std::string run = dir.file("run");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    DirectoryLock lock(run, "holder");
    const char ok = 'k';
    if (::write(ready[1], &ok, 1) != 1) ::_exit(2);
    ::pause();
    ::_exit(0);
  }
  char got = 0;
  ASSERT_EQ(::read(ready[0], &got, 1), 1);
  NMT_EXPECT_THROW_WITH(DirectoryLock(run, "second"), DirectoryBusy, run, std::string("holder"),
                        "pid " + std::to_string(child), std::string("since"));
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  DirectoryLock after(run, "third");
  EXPECT_TRUE(after.held());
  // In one process too: every open of the lock file is a holder of its own.
  NMT_EXPECT_THROW_WITH(DirectoryLock(run, "fourth"), DirectoryBusy, "third");
  ::close(ready[0]);
  ::close(ready[1]);
}

}  // namespace
}  // namespace nmt
