// The train/* log window: train/loss, train/nll and train/ppl are token-weighted means over the
// updates since the previous log step, not the log step's update alone, and a run resumed from a
// checkpoint that fell between two log steps logs the same values as the uninterrupted run (the
// window's sums travel in the checkpoint).

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>

#include "common/run_layout.h"
#include "test_utils.h"
#include "tiny_training.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/model/transformer.h"
#include "trainer/train/trainer.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;
using testing::TempDir;
using testing::tiny_config;
using testing::write_data;

// Every metric a run logs, by key and step.
class RecordingSink : public MetricsSink {
 public:
  void log(const std::string& key, std::int64_t step, double value) override {
    values[key][step] = value;
  }
  std::map<std::string, std::map<std::int64_t, double>> values;
};

std::map<std::string, std::map<std::int64_t, double>> train_recorded(const RunConfig& config,
                                                                     const std::string& run,
                                                                     bool resume = false) {
  auto sink = std::make_shared<RecordingSink>();
  train::Trainer(config, run, sink).run(resume);
  return sink->values;
}

// The same 20 updates logged at every step and every 5th: each logged loss of the second run is
// the mean of the first run's five per-update losses weighted by their target tokens.
TEST(TrainLogWindow, LossIsTheTokenWeightedMeanOfTheWindowsUpdates) {
  TempDir dir;
  auto config = tiny_config(write_data(dir, 48));
  config.train.max_steps = 20;
  config.train.log_every = 1;
  const auto each = train_recorded(config, dir.file("each"));
  config.train.log_every = 5;
  const auto windowed = train_recorded(config, dir.file("windowed"));

  ASSERT_EQ(windowed.at("train/loss").size(), 4u);
  for (const auto& [step, logged] : windowed.at("train/loss")) {
    double loss = 0, nll = 0, tokens = 0;
    for (std::int64_t s = step - 4; s <= step; ++s) {
      const double t = each.at("train/window_tgt_tokens").at(s);
      EXPECT_EQ(each.at("train/window_updates").at(s), 1.0) << s;
      loss += each.at("train/loss").at(s) * t;
      nll += each.at("train/nll").at(s) * t;
      tokens += t;
    }
    EXPECT_EQ(windowed.at("train/window_updates").at(step), 5.0) << step;
    EXPECT_EQ(windowed.at("train/window_tgt_tokens").at(step), tokens) << step;
    EXPECT_NEAR(logged, loss / tokens, 1e-12 * logged) << step;
    EXPECT_NEAR(windowed.at("train/nll").at(step), nll / tokens, 1e-12 * logged) << step;
    EXPECT_NEAR(windowed.at("train/ppl").at(step), std::exp(nll / tokens), 1e-9) << step;
    // The log step's update alone is another figure: the mean is not it by accident.
    EXPECT_GT(std::abs(logged - each.at("train/loss").at(step)), 1e-4) << step;
  }
}

// Logs at steps 8, 16 and 24; checkpoints every 10 steps, so the step-10 checkpoint holds the
// open window of updates 9 and 10. A run "killed" after it (its later checkpoint removed) resumes
// there and logs at 16 and 24 exactly what the uninterrupted run logged.
TEST(TrainLogWindow, ResumeMidWindowLogsWhatTheUninterruptedRunLogged) {
  TempDir dir;
  auto config = tiny_config(write_data(dir, 48));
  config.train.max_steps = 24;
  config.train.log_every = 8;
  config.train.validate_every = 0;
  ASSERT_EQ(config.checkpoint.every_steps, 10);
  const std::string straight = dir.file("straight"), interrupted = dir.file("interrupted");
  const auto reference = train_recorded(config, straight);
  ASSERT_EQ(reference.at("train/loss").size(), 3u);

  auto first_part = config;
  first_part.train.max_steps = 12;
  train_recorded(first_part, interrupted);
  const auto kept = run_layout::checkpoint_path(interrupted, 10);
  for (const auto& path : checkpoint::list_checkpoints(interrupted)) {
    if (path != kept) fs::remove(path);
  }
  const auto open = checkpoint::CheckpointReader(kept).state();
  EXPECT_EQ(open.window_updates, 2);  // updates 9 and 10
  EXPECT_GT(open.window_tgt_tokens, 0);
  EXPECT_GT(open.window_loss_sum, 0.0);
  EXPECT_GT(open.window_nll_sum, 0.0);
  EXPECT_EQ(checkpoint::CheckpointReader(run_layout::checkpoint_path(straight, 20))
                .state()
                .window_updates,
            4);  // 17 to 20

  const auto resumed = train_recorded(config, interrupted, /*resume=*/true);
  for (const std::string key : {"train/loss", "train/nll", "train/ppl", "train/window_updates",
                                "train/window_tgt_tokens", "train/tokens"}) {
    ASSERT_EQ(resumed.at(key).size(), 2u) << key;
    for (const std::int64_t step : {16, 24}) {
      EXPECT_EQ(resumed.at(key).at(step), reference.at(key).at(step)) << key << " at " << step;
    }
  }
  EXPECT_EQ(resumed.at("train/window_updates").at(16), 8.0);
  // train/tokens: the windows' target tokens summed over the run, through the resume too.
  double tokens = 0;
  for (const std::int64_t step : {8, 16, 24}) {
    tokens += reference.at("train/window_tgt_tokens").at(step);
    EXPECT_EQ(reference.at("train/tokens").at(step), tokens) << step;
  }
}

// A format 3 checkpoint (before the log window was stored; made here from a current one with
// h5py: the window's attributes and tgt_tokens removed and state_sha256 recomputed as that
// version wrote it) still loads, with an empty window and tgt_tokens unknown.
TEST(TrainLogWindow, AFormat3CheckpointLoadsWithAnEmptyWindow) {
  if (std::system("/usr/bin/python3 -c 'import h5py' 2> /dev/null") != 0) {
    GTEST_SKIP() << "no python3 with h5py";
  }
  TempDir dir;
  auto config = tiny_config(write_data(dir, 16));
  model::Transformer model(config.model);
  checkpoint::TrainingState state;
  state.step = 5;
  state.vocab_sha256 = "tiny";
  state.window_updates = 3;
  state.window_tgt_tokens = 40;
  state.window_loss_sum = 91.5;
  state.window_nll_sum = 80.25;
  state.tgt_tokens = 1234567;
  const std::string path = dir.file("step-5.h5");
  checkpoint::save_checkpoint(path, *model, nullptr, state, config);
  const auto stored = checkpoint::CheckpointReader(path).state();
  EXPECT_EQ(stored.window_updates, 3);
  EXPECT_EQ(stored.window_tgt_tokens, 40);
  EXPECT_EQ(stored.window_loss_sum, 91.5);
  EXPECT_EQ(stored.window_nll_sum, 80.25);
  EXPECT_EQ(stored.tgt_tokens, 1234567);

  const std::string script = dir.file("to_format3.py");
  std::ofstream(script)
      << "import sys\n"
         "sys.path.insert(0, sys.argv[1])\n"
         "import h5py\n"
         "import check_checkpoint_h5py as c\n"
         "with h5py.File(sys.argv[2], 'r+') as f:\n"
         "    for name in [n for n in f.attrs\n"
         "                 if n.startswith('log_window_') or n == 'tgt_tokens']:\n"
         "        del f.attrs[name]\n"
         "    f.attrs['format_version'] = 3\n"
         "    f.attrs['state_sha256'] = c.state_checksum(f.attrs)\n";
  const std::string command =
      "/usr/bin/python3 '" + script + "' '" + NMT_SOURCE_DIR + "/tests/scripts' '" + path + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const auto old = checkpoint::CheckpointReader(path).state();
  EXPECT_EQ(old.step, 5);
  EXPECT_EQ(old.window_updates, 0);
  EXPECT_EQ(old.window_tgt_tokens, 0);
  EXPECT_EQ(old.window_loss_sum, 0.0);
  EXPECT_EQ(old.window_nll_sum, 0.0);
  EXPECT_EQ(old.tgt_tokens, -1) << "unknown before format 5";
  checkpoint::load_checkpoint(path, *model, nullptr, config);  // verifies state_sha256 too
}

}  // namespace
}  // namespace nmt
