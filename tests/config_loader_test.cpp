// The strict YAML loader: defaults kept, types checked, unknown keys and bad overrides rejected
// with the file, line, dotted key and expected type.

#include "common/config_loader.h"

#include "test_utils.h"

namespace nmt {
namespace {

using testing::TempDir;
using testing::write_text;

struct ModelSection {
  int d_model = 512;
  double dropout = 0.1;
  bool shared = true;
  std::string positions = "sinusoidal";
  std::vector<std::int64_t> sizes;
};

struct Sample {
  ModelSection model;
  std::int64_t steps = 100000;
};

Sample load_sample(const YAML::Node& root, const std::string& source) {
  Sample s;
  ConfigSection top(root, source);
  const auto model = top.section("model");
  model.read("d_model", s.model.d_model);
  model.read("dropout", s.model.dropout);
  model.read("shared", s.model.shared);
  model.read("positions", s.model.positions);
  model.read("sizes", s.model.sizes);
  model.finish();
  top.read("steps", s.steps);
  top.finish();
  return s;
}

Sample load_text(const TempDir& dir, const std::string& text) {
  const auto path = dir.file("config.yaml");
  write_text(path, text);
  return load_sample(load_yaml_file(path), path);
}

TEST(ConfigLoader, ReadsValuesAndKeepsDefaults) {
  TempDir dir;
  const auto s = load_text(dir, "model:\n  d_model: 256\n  sizes: [1, 2, 3]\nsteps: 7\n");
  EXPECT_EQ(s.model.d_model, 256);
  EXPECT_DOUBLE_EQ(s.model.dropout, 0.1);
  EXPECT_TRUE(s.model.shared);
  EXPECT_EQ(s.model.positions, "sinusoidal");
  EXPECT_EQ(s.model.sizes, (std::vector<std::int64_t>{1, 2, 3}));
  EXPECT_EQ(s.steps, 7);
}

TEST(ConfigLoader, EmptyFileKeepsAllDefaults) {
  TempDir dir;
  const auto s = load_text(dir, "");
  EXPECT_EQ(s.model.d_model, 512);
  EXPECT_EQ(s.steps, 100000);
}

TEST(ConfigLoader, UnknownKeyNamesFileLineAndValidKeys) {
  TempDir dir;
  NMT_EXPECT_THROW_WITH(load_text(dir, "model:\n  d_model: 256\n  dmodel: 3\n"), ConfigError,
                        "config.yaml:3:3", "unknown key 'model.dmodel'", "d_model", "dropout");
}

TEST(ConfigLoader, UnknownTopLevelSection) {
  TempDir dir;
  NMT_EXPECT_THROW_WITH(load_text(dir, "optimiser:\n  lr: 1\n"), ConfigError, "config.yaml:1:1",
                        "unknown key 'optimiser'");
}

TEST(ConfigLoader, WrongTypesNameKeyAndExpectedType) {
  TempDir dir;
  NMT_EXPECT_THROW_WITH(load_text(dir, "model:\n  d_model: big\n"), ConfigError, "config.yaml:2:3",
                        "model.d_model", "expected an integer", "'big'");
  NMT_EXPECT_THROW_WITH(load_text(dir, "model:\n  d_model: 1.5\n"), ConfigError,
                        "expected an integer");
  NMT_EXPECT_THROW_WITH(load_text(dir, "model:\n  dropout: [1]\n"), ConfigError, "model.dropout",
                        "expected a finite number", "a list");
  NMT_EXPECT_THROW_WITH(load_text(dir, "model:\n  shared: yes\n"), ConfigError, "model.shared",
                        "expected a boolean");
  NMT_EXPECT_THROW_WITH(load_text(dir, "model:\n  sizes: [1, x]\n"), ConfigError, "model.sizes",
                        "item 1: expected integers");
  NMT_EXPECT_THROW_WITH(load_text(dir, "model: 3\n"), ConfigError, "model", "expected a mapping");
}

// .inf and .nan parse as YAML numbers but mean no setting; a repeated key would be ignored.
TEST(ConfigLoader, NonFiniteNumbersAndDuplicateKeysAreRefused) {
  TempDir dir;
  NMT_EXPECT_THROW_WITH(load_text(dir, "model:\n  dropout: .inf\n"), ConfigError, "config.yaml:2:3",
                        "model.dropout", "expected a finite number", "'.inf'");
  NMT_EXPECT_THROW_WITH(load_text(dir, "model:\n  dropout: .nan\n"), ConfigError, "'.nan'");
  NMT_EXPECT_THROW_WITH(load_text(dir, "model:\n  d_model: 256\n  d_model: 128\n"), ConfigError,
                        "config.yaml:3:3", "duplicate key 'model.d_model'", "first at",
                        "config.yaml:2:3");
  NMT_EXPECT_THROW_WITH(load_text(dir, "steps: 1\nmodel: {}\nsteps: 2\n"), ConfigError,
                        "config.yaml:3:1", "duplicate key 'steps'");
  const auto s = load_text(dir, "model:\n  dropout: 0.3\n");
  EXPECT_DOUBLE_EQ(s.model.dropout, 0.3) << "finite numbers still load";
}

TEST(ConfigLoader, SyntaxErrorAndMissingFile) {
  TempDir dir;
  NMT_EXPECT_THROW_WITH(load_text(dir, "model:\n  d_model: [1\n"), ConfigError,
                        "config.yaml:", "YAML syntax error");
  NMT_EXPECT_THROW_WITH(load_yaml_file(dir.file("absent.yaml")), ConfigError, "absent.yaml",
                        "cannot open");
}

TEST(ConfigLoader, OverridesKeepTypesAndCreateSections) {
  TempDir dir;
  const auto path = dir.file("c.yaml");
  write_text(path, "model:\n  d_model: 256\n");
  auto root = load_yaml_file(path);
  apply_override(root, "model.d_model=1024");
  apply_override(root, "model.dropout=0.3");
  apply_override(root, "model.sizes=[4, 5]");
  apply_override(root, "steps=9");
  const auto s = load_sample(root, path);
  EXPECT_EQ(s.model.d_model, 1024);
  EXPECT_DOUBLE_EQ(s.model.dropout, 0.3);
  EXPECT_EQ(s.model.sizes, (std::vector<std::int64_t>{4, 5}));
  EXPECT_EQ(s.steps, 9);
}

TEST(ConfigLoader, BadOverridesFail) {
  TempDir dir;
  const auto path = dir.file("c.yaml");
  write_text(path, "model:\n  d_model: 256\n");
  auto root = load_yaml_file(path);
  NMT_EXPECT_THROW_WITH(apply_override(root, "model.d_model"), ConfigError, "expected key=value");
  NMT_EXPECT_THROW_WITH(apply_override(root, "model..x=1"), ConfigError, "malformed key");
  NMT_EXPECT_THROW_WITH(apply_override(root, "model.d_model.x=1"), ConfigError, "not a section");
  apply_override(root, "model.no_such_key=1");
  NMT_EXPECT_THROW_WITH(load_sample(root, path), ConfigError, "--set",
                        "unknown key 'model.no_such_key'");
  auto root2 = load_yaml_file(path);
  apply_override(root2, "model.d_model=wide");
  NMT_EXPECT_THROW_WITH(load_sample(root2, path), ConfigError, "(or --set)", "model.d_model",
                        "expected an integer");
}

}  // namespace
}  // namespace nmt
