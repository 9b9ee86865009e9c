// The run config: the paper's base model by default, strict files and overrides, the decode
// section, the YAML round trip stored in checkpoints.

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "common/config_loader.h"
#include "test_utils.h"
#include "trainer/config/train_config.h"

namespace nmt {
namespace {

using testing::TempDir;

TEST(RunConfig, DefaultsAreThePaperBaseAndFilesAreStrict) {
  const RunConfig defaults;
  EXPECT_EQ(defaults.model.d_model, 512);
  EXPECT_EQ(defaults.model.heads, 8);
  EXPECT_DOUBLE_EQ(defaults.train.adam_beta2, 0.98);
  EXPECT_DOUBLE_EQ(defaults.train.adam_eps, 1e-9);
  EXPECT_EQ(defaults.train.warmup_steps, 4000);
  TempDir dir;
  testing::write_text(dir.file("r.yaml"), "model:\n  d_model: 256\ntrain:\n  max_steps: 10\n");
  const auto config =
      load_run_config(dir.file("r.yaml"), {"model.heads=4", "train.label_smoothing=0.2"});
  EXPECT_EQ(config.model.d_model, 256);
  EXPECT_EQ(config.model.heads, 4);
  EXPECT_DOUBLE_EQ(config.train.label_smoothing, 0.2);
  // Round trip through the YAML stored in checkpoints.
  const auto again = parse_run_config(to_yaml(config), "stored");
  EXPECT_EQ(to_yaml(again), to_yaml(config));
  // Numbers in their shortest exact form, as a person would write them.
  const std::string yaml = to_yaml(config);
  EXPECT_NE(yaml.find("label_smoothing: 0.2\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("layer_norm_eps: 1.0e-5\n"), std::string::npos) << yaml;
  EXPECT_EQ(yaml.find("0000000"), std::string::npos) << yaml;
  EXPECT_DOUBLE_EQ(again.model.layer_norm_eps, 1e-5);
  NMT_EXPECT_THROW_WITH(load_run_config(dir.file("r.yaml"), {"model.dmodel=3"}), ConfigError,
                        "unknown key 'model.dmodel'");
  NMT_EXPECT_THROW_WITH(load_run_config(dir.file("r.yaml"), {"train.max_steps=many"}), ConfigError,
                        "train.max_steps", "expected an integer");
  // Variants are parsed once, at load: an unknown one names its key and the choices.
  NMT_EXPECT_THROW_WITH(load_run_config(dir.file("r.yaml"), {"train.precision=fp8"}), ConfigError,
                        "train.precision", "expected auto, fp32, bf16, fp16");
  NMT_EXPECT_THROW_WITH(load_run_config(dir.file("r.yaml"), {"dist.backend=gloo"}), ConfigError,
                        "dist.backend", "expected auto, mpi, mpi-staged, nccl");
  const auto bf16 = load_run_config(dir.file("r.yaml"), {"train.precision=bf16"});
  EXPECT_EQ(bf16.train.precision, runtime::Precision::kBf16);
  EXPECT_NE(to_yaml(bf16).find("precision: bf16"), std::string::npos);
}

TEST(RunConfig, DecodeSectionIsThePapersByDefaultStoredAndChecked) {
  const RunConfig defaults;
  EXPECT_EQ(defaults.decode.average_last, 5);
  EXPECT_EQ(defaults.decode.beam, 4);
  EXPECT_DOUBLE_EQ(defaults.decode.alpha, 0.6);
  TempDir dir;
  testing::write_text(dir.file("r.yaml"), "decode:\n  beam: 6\n  alpha: 1.25\n");
  const auto config = load_run_config(dir.file("r.yaml"), {"decode.average_last=12"});
  EXPECT_EQ(config.decode.beam, 6);
  EXPECT_DOUBLE_EQ(config.decode.alpha, 1.25);
  EXPECT_EQ(config.decode.average_last, 12);
  // Stored with the rest of the config (config.yaml, checkpoints), so the tools find it there.
  const auto again = parse_run_config(to_yaml(config), "stored");
  EXPECT_EQ(again.decode.beam, 6);
  EXPECT_DOUBLE_EQ(again.decode.alpha, 1.25);
  EXPECT_EQ(again.decode.average_last, 12);
  // A config stored before the section existed gets the paper's settings.
  const auto older = parse_run_config("model:\n  d_model: 256\n", "older");
  EXPECT_EQ(older.decode.beam, 4);
  NMT_EXPECT_THROW_WITH(load_run_config(dir.file("r.yaml"), {"decode.length_penalty=1"}),
                        ConfigError, "unknown key 'decode.length_penalty'");
  for (const auto& [override_text, field] : std::vector<std::pair<std::string, std::string>>{
           {"decode.beam=0", "decode.beam"},
           {"decode.alpha=-1", "decode.alpha"},
           {"decode.average_last=0", "decode.average_last"}}) {
    NMT_EXPECT_THROW_WITH(load_run_config(dir.file("r.yaml"), {override_text}).validate(),
                          std::invalid_argument, field);
  }
}

}  // namespace
}  // namespace nmt
