// Nothing corrupt or non-finite gets into or out of a checkpoint: a flipped bit in a stored tensor
// is an error naming the file and the tensor (also for nmt-average); non-finite values are refused
// when saving and when loading; a checkpoint refuses a vocabulary other than its own; training
// skips an update whose gradients hold a NaN (the parameters and Adam's moments stay bit for bit)
// and stops with an error after train.max_skipped_updates in a row, leaving only finite
// checkpoints.

#include <ATen/ops/equal.h>
#include <ATen/ops/isfinite.h>
#include <fmt/format.h>
#include <hdf5.h>
#include <torch/utils.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <limits>

#include "common/run_layout.h"
#include "common/sha256.h"
#include "test_utils.h"
#include "tiny_training.h"
#include "trainer/checkpoint/averaging.h"
#include "trainer/checkpoint/checkpoint.h"
#include "trainer/model/transformer.h"
#include "trainer/optim/adam_state.h"
#include "trainer/train/trainer.h"

namespace nmt {
namespace {

namespace fs = std::filesystem;
using testing::load_model;
using testing::sink_in;
using testing::TempDir;
using testing::tiny_config;
using testing::write_data;

constexpr const char* kTensor = "encoder.layers.0.ffn.linear1.weight";

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Flips the lowest bit of one float of `tensor` where its values lie in the file (a contiguous,
// uncompressed dataset), as a failing disk or bus would: the value changes by one ulp, stays
// finite, and nothing but the checksum can tell.
void flip_a_bit_of(const std::string& path, const at::Tensor& tensor) {
  const auto values = tensor.detach().to(at::kFloat).contiguous();
  const std::string needle(static_cast<const char*>(values.data_ptr()), 64);
  std::string bytes = read_bytes(path);
  const auto at = bytes.find(needle);
  ASSERT_NE(at, std::string::npos) << "the tensor's values are not in " << path;
  ASSERT_EQ(bytes.find(needle, at + 1), std::string::npos) << "found twice";
  bytes[at + 32] = static_cast<char>(bytes[at + 32] ^ 0x01);  // float 8's lowest mantissa bit
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

// Sets the file's format_version attribute to `version` and nothing else.
void set_format_version(const std::string& path, std::int64_t version) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t attr = H5Aopen_by_name(file, "/", "format_version", H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(H5Awrite(attr, H5T_NATIVE_INT64, &version), 0);
  H5Aclose(attr);
  ASSERT_GE(H5Fclose(file), 0);
}

// Overwrites one value of a stored dataset through HDF5 (checksum left as it was) and makes the
// file one of format `version`: the version attribute, and the root attributes of later formats
// removed, as a file written by that version lacks them.
void poke(const std::string& path, const std::string& dataset, float value, std::int64_t version) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t data = H5Dopen2(file, dataset.c_str(), H5P_DEFAULT);
  ASSERT_GE(data, 0) << dataset;
  const hid_t space = H5Dget_space(data);
  std::vector<float> values(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
  ASSERT_GE(H5Dread(data, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  values[3] = value;
  ASSERT_GE(H5Dwrite(data, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data()), 0);
  const std::pair<const char*, std::int64_t> since[] = {
      {"vocab_sha256", 2},        {"state_sha256", 3},
      {"log_window_updates", 4},  {"log_window_tgt_tokens", 4},
      {"log_window_loss_sum", 4}, {"log_window_nll_sum", 4},
      {"tgt_tokens", 5}};
  for (const auto& [name, first] : since) {
    if (version < first && H5Aexists_by_name(file, "/", name, H5P_DEFAULT) > 0) {
      ASSERT_GE(H5Adelete_by_name(file, "/", name, H5P_DEFAULT), 0) << name;
    }
  }
  H5Sclose(space);
  H5Dclose(data);
  ASSERT_GE(H5Fclose(file), 0);
  set_format_version(path, version);
}

struct Saved {
  RunConfig config;
  std::string path;
  model::Transformer model{nullptr};
};

Saved save_one(const TempDir& dir, const std::string& name, const std::string& vocab = "tiny") {
  Saved s;
  s.config = tiny_config(write_data(dir, 16, "data-" + name, vocab));
  torch::manual_seed(7);
  s.model = model::Transformer(s.config.model);
  checkpoint::TrainingState state;
  state.step = 3;
  state.vocab_sha256 = vocab;
  s.path = dir.file(name + ".h5");
  checkpoint::save_checkpoint(s.path, *s.model, nullptr, state, s.config);
  return s;
}

TEST(CheckpointIntegrity, AFlippedBitIsAnErrorNamingTheFileAndTheTensor) {
  TempDir dir;
  const auto good = save_one(dir, "good");
  EXPECT_NO_THROW(load_model(good.path, good.config));
  const std::string bad = dir.file("bad.h5");
  fs::copy_file(good.path, bad);
  flip_a_bit_of(bad, good.model->named_parameters()[kTensor]);
  NMT_EXPECT_THROW_WITH(load_model(bad, good.config), std::runtime_error, "bad.h5", kTensor,
                        "checksum");
  // nmt-average reads every input through the same check and writes nothing.
  const std::string average = dir.file("average.h5");
  NMT_EXPECT_THROW_WITH(checkpoint::average_checkpoints({good.path, bad}, average),
                        std::runtime_error, "bad.h5", kTensor);
  EXPECT_FALSE(fs::exists(average));
}

TEST(CheckpointIntegrity, NonFiniteValuesAreNeitherSavedNorLoaded) {
  TempDir dir;
  const auto good = save_one(dir, "good");
  {
    torch::NoGradGuard no_grad;
    good.model->named_parameters()[kTensor].view({-1})[5] = std::nanf("");
  }
  const std::string nan_path = dir.file("nan.h5");
  NMT_EXPECT_THROW_WITH(
      checkpoint::save_checkpoint(nan_path, *good.model, nullptr, {}, good.config),
      std::runtime_error, "nan.h5", kTensor, "non-finite");
  EXPECT_FALSE(fs::exists(nan_path));

  // An infinity behind a checksum that cannot see it (a format 1 file, before checksums).
  const std::string inf_path = dir.file("inf.h5");
  fs::copy_file(good.path, inf_path);
  poke(inf_path, std::string("/model/") + kTensor, std::numeric_limits<float>::infinity(), 1);
  NMT_EXPECT_THROW_WITH(load_model(inf_path, good.config), std::runtime_error, "inf.h5", kTensor,
                        "non-finite");
  // The same file with a finite value loads: format 1 is still read.
  poke(inf_path, std::string("/model/") + kTensor, 0.25f, 1);
  EXPECT_NO_THROW(load_model(inf_path, good.config));
  EXPECT_EQ(checkpoint::CheckpointReader(inf_path).state().vocab_sha256, "") << "format 1: no hash";
}

// format_version is no part of state_sha256 (it says which attributes a reader hashes); edited, it
// is found out by the attributes the file holds, which are those of another version. Taken at
// its word, version 4 would drop tgt_tokens and version 1 every tensor's checksum.
TEST(CheckpointIntegrity, AnEditedFormatVersionIsRefused) {
  TempDir dir;
  const auto good = save_one(dir, "good");
  for (const std::int64_t version : {1, 2, 4}) {
    const std::string edited = dir.file(fmt::format("v{}.h5", version));
    fs::copy_file(good.path, edited);
    set_format_version(edited, version);
    NMT_EXPECT_THROW_WITH(load_model(edited, good.config), std::runtime_error, edited,
                          fmt::format("format_version is {}", version), std::string("corrupt"));
    NMT_EXPECT_THROW_WITH(checkpoint::CheckpointReader(edited).state(), std::runtime_error,
                          "format_version");
  }
}

TEST(CheckpointIntegrity, AnotherVocabularyIsRefusedNamingBothHashes) {
  TempDir dir;
  const auto a = save_one(dir, "a", "aaaa");
  const auto b = save_one(dir, "b", "bbbb");
  const auto state = checkpoint::CheckpointReader(a.path).state();
  EXPECT_EQ(state.vocab_sha256, "aaaa");
  EXPECT_NO_THROW(checkpoint::check_vocabulary(a.path, state, "aaaa", "spm.model"));
  NMT_EXPECT_THROW_WITH(checkpoint::check_vocabulary(a.path, state, "bbbb", "spm.model"),
                        std::runtime_error, "a.h5", "aaaa", "bbbb", "spm.model");
  NMT_EXPECT_THROW_WITH(checkpoint::average_checkpoints({a.path, b.path}, dir.file("ab.h5")),
                        std::runtime_error, "aaaa", "bbbb");

  // Resuming a run on shards made with another vocabulary.
  auto config = tiny_config(write_data(dir, 16, "data-one", "one"));
  config.train.max_steps = 4;
  const std::string run = dir.file("run");
  train::Trainer(config, run, sink_in(run)).run(false);
  EXPECT_EQ(checkpoint::CheckpointReader(run_layout::checkpoint_path(run, 4)).state().vocab_sha256,
            "one");
  auto other = config;
  other.data.dir = write_data(dir, 16, "data-two", "two");
  other.train.max_steps = 8;
  NMT_EXPECT_THROW_WITH(train::Trainer(other, run, sink_in(run)).run(true), std::runtime_error,
                        "step-00000004.h5", "one", "two");
}

// A checkpoint carries its SentencePiece model (any bytes here: the checkpoint does not parse
// it), verified against the recorded hash on read; nmt-average passes it on.
TEST(CheckpointIntegrity, CarriesItsVocabularyAndVerifiesIt) {
  TempDir dir;
  auto a = save_one(dir, "a");
  const std::string model_bytes = std::string("\x0a\x05piece", 7) + std::string(1000, '\x01');
  checkpoint::TrainingState state = checkpoint::CheckpointReader(a.path).state();
  EXPECT_TRUE(state.vocab_model.empty());  // saved without one
  state.vocab_model = model_bytes;
  state.vocab_sha256 = sha256_hex(model_bytes);
  checkpoint::save_checkpoint(a.path, *a.model, nullptr, state, a.config);
  const std::string b = dir.file("b.h5");
  checkpoint::save_checkpoint(b, *a.model, nullptr, state, a.config);
  EXPECT_EQ(checkpoint::CheckpointReader(a.path).state().vocab_model, model_bytes);
  const std::string average = dir.file("average.h5");
  checkpoint::average_checkpoints({a.path, b}, average);
  EXPECT_EQ(checkpoint::CheckpointReader(average).state().vocab_model, model_bytes);

  // A newer input written without it (before checkpoints carried it): the average keeps it.
  checkpoint::TrainingState older_format = state;
  older_format.vocab_model.clear();
  older_format.step = 9;
  const std::string newer = dir.file("newer.h5");
  checkpoint::save_checkpoint(newer, *a.model, nullptr, older_format, a.config);
  checkpoint::average_checkpoints({a.path, newer}, average);
  EXPECT_EQ(checkpoint::CheckpointReader(average).state().vocab_model, model_bytes);

  // A flipped byte in the stored model: an error naming the file, not a vocabulary used blindly.
  const std::string bad = dir.file("bad.h5");
  fs::copy_file(a.path, bad);
  std::string bytes = read_bytes(bad);
  const auto at = bytes.find(model_bytes);
  ASSERT_NE(at, std::string::npos);
  bytes[at + 500] ^= 0x04;
  std::ofstream(bad, std::ios::binary | std::ios::trunc) << bytes;
  NMT_EXPECT_THROW_WITH(checkpoint::CheckpointReader(bad).state(), std::runtime_error, "bad.h5",
                        "SentencePiece model stored", state.vocab_sha256.c_str());
  // A model that is not the recorded one is refused at the save already.
  state.vocab_sha256 = sha256_hex(model_bytes + "x");
  NMT_EXPECT_THROW_WITH(
      checkpoint::save_checkpoint(dir.file("mismatch.h5"), *a.model, nullptr, state, a.config),
      std::runtime_error, "mismatch.h5", "not the state's vocab_sha256");
  EXPECT_FALSE(fs::exists(dir.file("mismatch.h5")));
}

// Trains `config` in `run` with a checkpoint at every step, writing a NaN into the first
// parameter's gradient at the updates `poisoned` picks.
train::TrainResult train_with_nans(RunConfig config, const std::string& run,
                                   std::function<bool(std::int64_t)> poisoned) {
  config.checkpoint.every_steps = 1;
  train::Trainer trainer(config, run, sink_in(run));
  trainer.set_after_backward([poisoned](std::int64_t step, const std::vector<at::Tensor>& params) {
    if (poisoned(step)) params[0].grad().view({-1})[0] = std::nanf("");
  });
  return trainer.run(false);
}

// A NaN in one gradient at steps 3 and 4: both updates are skipped, so the parameters and Adam's
// moments after step 4 are bit for bit those after step 2; training then goes on.
TEST(CheckpointIntegrity, ANanGradientSkipsTheUpdate) {
  TempDir dir;
  auto config = tiny_config(write_data(dir, 32));
  config.train.max_steps = 6;
  config.checkpoint.keep_last = 10;
  const std::string run = dir.file("run");
  const auto result =
      train_with_nans(config, run, [](std::int64_t step) { return step == 3 || step == 4; });
  EXPECT_EQ(result.steps, 6);
  EXPECT_EQ(result.skipped_updates, 2);

  model::Transformer before(config.model), after(config.model), later(config.model);
  torch::optim::Adam adam_before(before->parameters()), adam_after(after->parameters());
  checkpoint::load_checkpoint(run_layout::checkpoint_path(run, 2), *before, &adam_before, config);
  checkpoint::load_checkpoint(run_layout::checkpoint_path(run, 4), *after, &adam_after, config);
  checkpoint::load_checkpoint(run_layout::checkpoint_path(run, 6), *later, nullptr, config);
  const auto pb = before->named_parameters(), pa = after->named_parameters();
  const auto pl = later->named_parameters();
  bool moved = false;
  for (const auto& item : pb) {
    EXPECT_TRUE(at::equal(item.value(), pa[item.key()])) << item.key() << " changed";
    EXPECT_TRUE(at::isfinite(pl[item.key()]).all().item<bool>()) << item.key();
    moved |= !at::equal(item.value(), pl[item.key()]);
  }
  EXPECT_TRUE(moved) << "steps 5 and 6 trained";
  for (const auto& item : pb) {
    const auto& sb = static_cast<const torch::optim::AdamParamState&>(
        *adam_before.state().at(optim::adam_state_key(adam_before.state(), item.value())));
    const auto& sa = static_cast<const torch::optim::AdamParamState&>(
        *adam_after.state().at(optim::adam_state_key(adam_after.state(), pa[item.key()])));
    EXPECT_TRUE(at::equal(sb.exp_avg_sq(), sa.exp_avg_sq())) << item.key();
  }
}

// NaN gradients from step 4 on with max_skipped_updates 3: the run stops at step 6 with an
// error, and every checkpoint left (keep_last 2) loads, the newest holding step 3's weights.
TEST(CheckpointIntegrity, TooManyNanUpdatesInARowStopTheRun) {
  TempDir dir;
  auto config = tiny_config(write_data(dir, 32));
  config.train.max_steps = 20;
  config.train.max_skipped_updates = 3;
  config.checkpoint.keep_last = 2;
  const std::string run = dir.file("run");
  NMT_EXPECT_THROW_WITH(train_with_nans(config, run, [](std::int64_t step) { return step >= 4; }),
                        std::runtime_error, "step 6", "3 updates in a row", "max_skipped_updates");
  const auto left = checkpoint::list_checkpoints(run);
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left.back(), run_layout::checkpoint_path(run, 5));
  const auto newest = load_model(left.back(), config);
  const auto third = load_model(left.front(), config);  // step 4: skipped, so step 3's weights
  for (const auto& item : newest->named_parameters()) {
    EXPECT_TRUE(at::equal(item.value(), third->named_parameters()[item.key()])) << item.key();
  }
}

}  // namespace
}  // namespace nmt
