// A run directory's layout (common/run_layout.h) and the atomic writer's temporaries
// (common/atomic_file.h): the names the trainer writes are the names every reader parses, the
// patterns take nothing else, and a checkpoint's run directory is found from where it lies.

#include "common/run_layout.h"

#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>

#include "common/atomic_file.h"
#include "test_utils.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::write_text;

std::string name_of(const std::string& path) {
  return fs::path(path).filename().string();
}

TEST(RunLayout, WrittenNamesAreTheNamesRead) {
  EXPECT_EQ(run_layout::checkpoint_path("runs/a", 100), "runs/a/checkpoints/step-00000100.h5");
  EXPECT_EQ(run_layout::best_checkpoint_path("runs/a"), "runs/a/checkpoints/best.h5");
  EXPECT_EQ(run_layout::config_path("runs/a"), "runs/a/config.yaml");
  EXPECT_EQ(run_layout::metrics_path("runs/a"), "runs/a/metrics.jsonl");
  EXPECT_EQ(run_layout::identity_path("runs/a"), "runs/a/run.json");
  EXPECT_EQ(run_layout::spool_path("runs/a", 3), "runs/a/tracker-spool-rank3.jsonl");
  for (const std::int64_t step : {0LL, 7LL, 99999999LL, 123456789012LL}) {
    EXPECT_EQ(run_layout::checkpoint_step(name_of(run_layout::checkpoint_path("r", step))), step);
  }
  EXPECT_EQ(run_layout::spool_rank(name_of(run_layout::spool_path("r", 12))), 12);
  EXPECT_TRUE(run_layout::is_best_checkpoint(name_of(run_layout::best_checkpoint_path("r"))));
}

TEST(RunLayout, PatternsTakeNothingElse) {
  for (const char* name : {"step-.h5", "step-12a.h5", "step-12.h5.tmp.5", "step--1.h5",
                           "step-99999999999999999999.h5", "xstep-1.h5", "step-1.h55", "best.h5"}) {
    EXPECT_FALSE(run_layout::checkpoint_step(name)) << name;
  }
  for (const char* name : {"tracker-spool-rank.jsonl", "tracker-spool-rank1.json",
                           "tracker-spool-rankx.jsonl", "tracker-spool-rank1.jsonl.tmp.3"}) {
    EXPECT_FALSE(run_layout::spool_rank(name)) << name;
  }
  EXPECT_TRUE(run_layout::is_averaged_checkpoint("averaged.h5"));
  EXPECT_TRUE(run_layout::is_averaged_checkpoint("averaged-last5.h5"));
  EXPECT_FALSE(run_layout::is_averaged_checkpoint("averaged.h5.tmp.4"));
  EXPECT_FALSE(run_layout::is_averaged_checkpoint("my-averaged.h5"));
}

TEST(RunLayout, AToolsSpoolIsItsOwnFile) {
  const std::int64_t may_day_noon_ms = 1714564800123;
  const auto path = run_layout::tool_spool_path("runs/a", "nmt-evaluate", may_day_noon_ms, 4711);
  EXPECT_EQ(path, "runs/a/tracker-spool-20240501T120000.123Z-nmt-evaluate-4711.jsonl");
  EXPECT_TRUE(run_layout::is_tool_spool(name_of(path)));
  // Apart from the trainer's spools, and the names sort by time whatever the tool.
  EXPECT_FALSE(run_layout::spool_rank(name_of(path)));
  EXPECT_FALSE(run_layout::is_tool_spool(name_of(run_layout::spool_path("r", 0))));
  EXPECT_LT(name_of(run_layout::tool_spool_path("r", "nmt-evaluate", 999, 9)),
            name_of(run_layout::tool_spool_path("r", "nmt-average", 1000, 1)));
  for (const char* tool : {"", "Nmt", "nmt evaluate", "../x"}) {
    EXPECT_THROW(run_layout::tool_spool_path("r", tool, 0, 1), std::invalid_argument) << tool;
  }
  for (const char* name : {"tracker-spool-20240501T120000.123Z-nmt-evaluate-.jsonl",
                           "tracker-spool-20240501T120000.123Z-nmt-evaluate-1.json",
                           "tracker-spool-20240501T120000.123Z--4711.jsonl",
                           "tracker-spool-20240501T120000.123Z-4711.jsonl",
                           "tracker-spool-2024050T120000.123Z-x-1.jsonl",
                           "tracker-spool-20240501T120000.123Z-Nmt-1.jsonl",
                           "tracker-spool-20240501T120000.123Z-x-1.jsonl.tmp.5"}) {
    EXPECT_FALSE(run_layout::is_tool_spool(name)) << name;
  }
}

TEST(RunLayout, TemporariesOfTheRunFilesNameTheirWriter) {
  const auto temporary = [](const std::string& path, long pid) {
    return name_of(atomic_temporary_path(path, pid));
  };
  EXPECT_EQ(run_layout::temporary_writer(temporary(run_layout::checkpoint_path("r", 40), 77)), 77);
  EXPECT_EQ(run_layout::temporary_writer(temporary(run_layout::best_checkpoint_path("r"), 5)), 5);
  EXPECT_EQ(run_layout::temporary_writer(temporary(run_layout::config_path("r"), 8)), 8);
  EXPECT_EQ(run_layout::temporary_writer(temporary(run_layout::identity_path("r"), 9)), 9);
  EXPECT_EQ(run_layout::temporary_writer(temporary(run_layout::metrics_path("r"), 10)), 10);
  // Not a file the trainer writes, or not a temporary at all.
  EXPECT_FALSE(run_layout::temporary_writer(temporary("r/notes.txt", 11)));
  EXPECT_FALSE(run_layout::temporary_writer("config.yaml"));
  EXPECT_FALSE(run_layout::temporary_writer("config.yaml.tmp."));
  EXPECT_FALSE(run_layout::temporary_writer("config.yaml.tmp.12x"));
  EXPECT_FALSE(run_layout::temporary_writer("config.yaml.tmp.12345678901234567890"));

  const auto parsed = parse_atomic_temporary(temporary("dir/port", 4242));
  ASSERT_TRUE(parsed);
  EXPECT_EQ(parsed->target, "port");
  EXPECT_EQ(parsed->pid, 4242);
  EXPECT_FALSE(parse_atomic_temporary(".tmp.5"));
}

TEST(RunLayout, ACheckpointsRunDirectoryIsFoundFromWhereItLies) {
  TempDir dir;
  const std::string run = dir.file("run");
  EXPECT_EQ(run_layout::run_dir_of_checkpoint(run_layout::checkpoint_path(run, 3)), run);
  EXPECT_EQ(run_layout::run_dir_of_checkpoint(run_layout::best_checkpoint_path(run)), run);
  // An average beside train/ (the quickstart's and nmt-sweep's layout) belongs to train/ when only
  // train/ has a run.json; with a run.json of its own, the folder is the run.
  fs::create_directories(dir.file("exp/train"));
  write_text(run_layout::identity_path(dir.file("exp/train")), "{}");
  EXPECT_EQ(run_layout::run_dir_of_checkpoint(dir.file("exp/averaged.h5")), dir.file("exp/train"));
  write_text(run_layout::identity_path(dir.file("exp")), "{}");
  EXPECT_EQ(run_layout::run_dir_of_checkpoint(dir.file("exp/averaged.h5")), dir.file("exp"));
  EXPECT_EQ(run_layout::run_dir_of_checkpoint("averaged.h5"), ".");
}

TEST(AtomicFileWriter, AnUncommittedWriteLeavesTheTargetAndNoTemporary) {
  TempDir dir;
  const std::string target = dir.file("out.bin");
  write_text(target, "old");
  {
    AtomicFileWriter out(target);
    out.append("new contents", 12);
    EXPECT_TRUE(fs::exists(out.temporary()));
    EXPECT_EQ(out.temporary(), atomic_temporary_path(target, ::getpid()));
  }
  EXPECT_EQ(testing::read_text(target), "old");
  EXPECT_FALSE(fs::exists(atomic_temporary_path(target, ::getpid())));
  {
    AtomicFileWriter out(target);
    out.reserve(64);
    out.write_at("tail", 4, 5);
    out.write_at("head ", 5, 0);
    out.commit(9);
  }
  EXPECT_EQ(testing::read_text(target), "head tail");
  EXPECT_FALSE(fs::exists(atomic_temporary_path(target, ::getpid())));
}

}  // namespace
}  // namespace nmt
