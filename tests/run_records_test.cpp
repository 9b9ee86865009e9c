// What a run writes is complete and its own: a run that cannot record its metrics stops with a
// checkpoint, checkpoint attributes are checksummed and carry the run's uid, stale temporaries
// are removed, and metrics.jsonl has one line per step after a resume.

#include <hdf5.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/metrics_log.h"
#include "common/run_layout.h"
#include "test_utils.h"
#include "tiny_training.h"
#include "trainer/checkpoint/averaging.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/train/metrics_sink.h"
#include "trainer/train/trainer.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;
using testing::load_model;
using testing::sink_in;
using testing::TempDir;
using testing::tiny_config;
using testing::write_data;

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(JsonlMetricsSink, AFailedWriteIsReportedAndItsLinesWait) {
  train::JsonlMetricsSink sink("/dev/full");
  EXPECT_EQ(sink.failure(), "");
  sink.log("train/loss", 7, 2.5);
  sink.log("train/loss", 8, 2.4);
  sink.flush();
  const std::string why = sink.failure();
  EXPECT_NE(why.find("/dev/full"), std::string::npos) << why;
  EXPECT_NE(why.find("No space left"), std::string::npos) << why;
  EXPECT_NE(why.find("steps 7 to 8"), std::string::npos) << why;
}

// A sink that cannot write (here its file is /dev/full) stops the run after the next update, with
// a checkpoint there, rather than letting it train on without a record.
TEST(Trainer, ARunThatCannotRecordStopsWithACheckpoint) {
  TempDir dir;
  auto config = tiny_config(write_data(dir, 32));
  config.train.max_steps = 40;
  config.train.log_every = 1;
  config.train.validate_every = 0;
  config.checkpoint.every_steps = 100;
  const std::string run = dir.file("run");
  fs::create_directories(run);
  auto sink = std::make_shared<train::JsonlMetricsSink>("/dev/full");
  const auto result = train::Trainer(config, run, sink).run(false);
  EXPECT_EQ(result.stopped, StopReason::kUnrecorded);
  EXPECT_EQ(result.steps, 2) << "step 1's lines fail; the run stops after the next update";
  EXPECT_TRUE(fs::exists(run_layout::checkpoint_path(run, 2)));
  EXPECT_EQ(exit_code(result.stopped), kExitUnrecorded);
}

TEST(MetricsLog, TrimKeepsOneLinePerStepUpToTheResumedCheckpoint) {
  TempDir dir;
  const std::string path = dir.file("metrics.jsonl");
  testing::write_text(path,
                      "{\"step\": 1, \"key\": \"train/loss\", \"value\": 9.0, \"time\": 1.0}\n"
                      "{\"step\": 2, \"key\": \"train/loss\", \"value\": 8.0, \"time\": 2.0}\n"
                      "{\"step\": 3, \"key\": \"train/loss\", \"value\": 7.0, \"time\": 3.0}\n"
                      // an older build's resume from step 1 logged step 2 again
                      "{\"step\": 2, \"key\": \"train/loss\", \"value\": 8.5, \"time\": 4.0}\n"
                      "{\"step\": 2, \"key\": \"train/ppl\", \"value\": null, \"time\": 4.0}\n"
                      "{\"step\": 3, \"key\": \"train/loss\", \"value\": 7.5, \"time\": 5.0}\n"
                      "{\"step\": 4, \"key\": \"train/lo");  // torn by a crash
  const auto kept = train::trim_metrics_log(path, 2);
  ASSERT_EQ(kept.size(), 3u);
  EXPECT_EQ(kept[0].step, 1);
  EXPECT_EQ(kept[1].key, "train/loss");
  EXPECT_EQ(kept[1].step, 2);
  EXPECT_EQ(kept[1].value, 8.5) << "the later line of a step wins";
  EXPECT_FALSE(kept[2].value.has_value()) << "null: non-finite";
  const auto lines = lines_of(path);
  ASSERT_EQ(lines.size(), 3u);
  for (const auto& line : lines) EXPECT_NO_THROW(nlohmann::json::parse(line)) << line;
  // Nothing to drop: the file is left as it is.
  const auto before = fs::last_write_time(path);
  EXPECT_EQ(train::trim_metrics_log(path, 2).size(), 3u);
  EXPECT_EQ(fs::last_write_time(path), before);
  EXPECT_TRUE(train::trim_metrics_log(dir.file("absent.jsonl"), 5).empty());
  // An endless file (a link to /dev/zero) is refused before a byte is read (it once grew the
  // resume's memory until the OOM killer ended it); an overlong line is dropped as unreadable.
  fs::create_symlink("/dev/zero", dir.file("zero.jsonl"));
  NMT_EXPECT_THROW_WITH(train::trim_metrics_log(dir.file("zero.jsonl"), 5), std::runtime_error,
                        "zero.jsonl", "a character device, not a regular file");
  testing::write_text(path, std::string(kMaxMetricLineBytes * 4, 'x') +
                                "\n{\"step\": 1, \"key\": \"train/loss\", \"value\": 9.0}\n");
  EXPECT_EQ(train::trim_metrics_log(path, 5).size(), 1u);
  EXPECT_EQ(lines_of(path).size(), 1u);
}

// A run killed after its checkpoint of step 8 had logged steps 9..10; resumed from step 8, it
// logs them again: metrics.jsonl then has each (key, step) once.
TEST(Trainer, ResumedRunLeavesOneMetricsLinePerStep) {
  TempDir dir;
  auto config = tiny_config(write_data(dir, 32));
  config.model.layers = 1;
  config.train.max_steps = 12;
  config.train.log_every = 1;
  config.train.validate_every = 4;
  config.checkpoint.every_steps = 4;
  const std::string run = dir.file("run");
  train::Trainer(config, run, sink_in(run)).run(false);
  // As a SIGKILL after step 10 leaves it: checkpoints up to step 8, lines up to step 10.
  fs::remove(run_layout::checkpoint_path(run, 12));
  const std::string metrics = run + "/metrics.jsonl";
  const auto all = lines_of(metrics);
  std::string upto10;
  for (const auto& line : all) {
    if (nlohmann::json::parse(line).at("step").get<int>() <= 10) upto10 += line + "\n";
  }
  testing::write_text(metrics, upto10);
  train::trim_metrics_log(metrics, 8);
  train::Trainer(config, run, sink_in(run)).run(true);
  std::map<std::pair<std::string, int>, int> seen;
  for (const auto& line : lines_of(metrics)) {
    const auto json = nlohmann::json::parse(line);
    ++seen[{json.at("key").get<std::string>(), json.at("step").get<int>()}];
  }
  for (int step = 1; step <= 12; ++step) {
    EXPECT_EQ((seen[{"train/loss", step}]), 1) << "step " << step;
  }
  for (const auto& [key, count] : seen) EXPECT_EQ(count, 1) << key.first << " " << key.second;
}

// Sets a root attribute of a checkpoint as h5py would, leaving everything else as it was.
void set_int_attribute(const std::string& path, const char* name, std::int64_t value) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t attr = H5Aopen_by_name(file, "/", name, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(attr, 0) << name;
  ASSERT_GE(H5Awrite(attr, H5T_NATIVE_INT64, &value), 0);
  H5Aclose(attr);
  ASSERT_GE(H5Fclose(file), 0);
}

// step 40 -> 44 by hand made a resume silently inexact: the attributes are checksummed now.
TEST(CheckpointIntegrity, AChangedStateAttributeIsRefusedLikeAFlippedBit) {
  TempDir dir;
  auto config = tiny_config(write_data(dir, 32));
  config.model.layers = 1;
  config.train.max_steps = 10;
  config.train.validate_every = 0;
  const std::string run = dir.file("run");
  train::Trainer(config, run, sink_in(run)).run(false);
  const std::string path = run_layout::checkpoint_path(run, 10);
  EXPECT_NO_THROW(checkpoint::CheckpointReader(path).state());
  for (const char* name : {"step", "optimizer_step", "epoch", "batch_in_epoch"}) {
    const std::string copy = dir.file(std::string(name) + ".h5");
    fs::copy_file(path, copy);
    set_int_attribute(copy, name, 14);
    NMT_EXPECT_THROW_WITH(checkpoint::CheckpointReader(copy).state(), std::runtime_error, copy,
                          std::string("state_sha256"));
    NMT_EXPECT_THROW_WITH(load_model(copy, config), std::runtime_error, "state_sha256");
  }
  // A resume from the changed file is refused too.
  set_int_attribute(path, "step", 14);
  NMT_EXPECT_THROW_WITH(train::Trainer(config, run, sink_in(run)).run(true), std::runtime_error,
                        "state_sha256");
}

// A SIGKILL in the middle of a checkpoint write leaves step-N.h5.tmp.PID: the next start and the
// keep_last pruning remove it (and any other atomic write's temporary of another process).
TEST(Checkpoints, StaleTemporariesAreRemovedByPruning) {
  TempDir dir;
  const std::string run = dir.file("run");
  fs::create_directories(run + "/checkpoints");
  const std::string stale = run + "/checkpoints/step-00000050.h5.tmp.4194000";
  const std::string stale_config = run + "/config.yaml.tmp.17";
  const std::string own = run + "/checkpoints/step-00000060.h5.tmp." + std::to_string(::getpid());
  const std::string other = run + "/checkpoints/notes.txt.tmp.17";
  for (const auto& path : {stale, stale_config, own, other}) testing::write_text(path, "x");
  checkpoint::prune_checkpoints(run, 3);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_FALSE(fs::exists(stale_config));
  EXPECT_TRUE(fs::exists(own)) << "this process's own write in progress";
  EXPECT_TRUE(fs::exists(other)) << "not a trainer's temporary";
}

// Checkpoints carry their run's uid; averaging a run directory refuses a foreign one.
TEST(Checkpoints, AveragingARunDirectoryRefusesAnotherRunsCheckpoint) {
  TempDir dir;
  auto config = tiny_config(write_data(dir, 32));
  config.model.layers = 1;
  config.train.max_steps = 20;
  config.train.validate_every = 0;
  const std::string a = dir.file("a"), b = dir.file("b");
  train::Trainer ta(config, a, sink_in(a));
  ta.set_run_uid("aaaaaaaaaaaaaaaa");
  ta.run(false);
  train::Trainer tb(config, b, sink_in(b));
  tb.set_run_uid("bbbbbbbbbbbbbbbb");
  tb.run(false);
  EXPECT_EQ(checkpoint::CheckpointReader(run_layout::checkpoint_path(a, 20)).state().run_uid,
            "aaaaaaaaaaaaaaaa");
  EXPECT_EQ(checkpoint::last_checkpoints(a, 2, "aaaaaaaaaaaaaaaa").size(), 2u);
  fs::copy_file(run_layout::checkpoint_path(b, 20), run_layout::checkpoint_path(a, 25));
  NMT_EXPECT_THROW_WITH(checkpoint::last_checkpoints(a, 2, "aaaaaaaaaaaaaaaa"), std::runtime_error,
                        "step-00000025.h5", "bbbbbbbbbbbbbbbb");
  NMT_EXPECT_THROW_WITH(checkpoint::last_checkpoints(a, 2), std::runtime_error, "two runs");
  // And a resume of `a` from the foreign newest checkpoint.
  train::Trainer resumed(config, a, sink_in(a));
  resumed.set_run_uid("aaaaaaaaaaaaaaaa");
  NMT_EXPECT_THROW_WITH(resumed.run(true), std::runtime_error, "bbbbbbbbbbbbbbbb", "mixes");
}

}  // namespace
}  // namespace nmt
