// The strict YAML loader: defaults kept, types checked, unknown keys, null and empty values, a
// second YAML document and bad overrides rejected with the file, line (or --set flag), dotted key
// and expected type.

#include "common/config_loader.h"

#include <fmt/format.h>

#include <filesystem>
#include <limits>

#include "test_utils.h"

namespace nmt {
namespace {

using testing::TempDir;
using testing::write_text;

struct ModelSection {
  int layers = 6;
  int d_model = 512;
  double dropout = 0.1;
  bool shared = true;
  std::string positions = "sinusoidal";
  std::vector<std::int64_t> sizes;
};

struct DataSection {
  std::string train_split = "train";  // "" refused
  std::string valid_split = "valid";  // "": no validation
};

struct Sample {
  ModelSection model;
  DataSection data;
  std::int64_t steps = 100000;
};

Sample load_sample(const YAML::Node& root, const std::string& source) {
  Sample s;
  ConfigSection top(root, source);
  const auto model = top.section("model");
  model.read("layers", s.model.layers);
  model.read("d_model", s.model.d_model);
  model.read("dropout", s.model.dropout);
  model.read("shared", s.model.shared);
  model.read("positions", s.model.positions);
  model.read("sizes", s.model.sizes);
  model.finish();
  const auto data = top.section("data");
  data.read("train_split", s.data.train_split);
  data.read("valid_split", s.data.valid_split, EmptyString::kAllowed);
  data.finish();
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

// Integers as YAML 1.2's core schema writes them (docs/config.md, "Values"): decimal with a sign,
// 0o octal, 0x hex; a quoted or !!str-tagged scalar is a string, refused where a number is read.
TEST(ConfigLoader, IntegerFormsAndStringsWhereNumbersGo) {
  TempDir dir;
  EXPECT_EQ(load_text(dir, "model:\n  layers: 0x10\n").model.layers, 16);
  EXPECT_EQ(load_text(dir, "model:\n  layers: 0o17\n").model.layers, 15);
  EXPECT_EQ(load_text(dir, "model:\n  layers: 012\n").model.layers, 12) << "decimal, not octal";
  EXPECT_EQ(load_text(dir, "model:\n  layers: +5\n").model.layers, 5);
  EXPECT_EQ(load_text(dir, "model:\n  layers: !!int 7\n").model.layers, 7);
  EXPECT_EQ(load_text(dir, "steps: -9223372036854775808\n").steps,
            std::numeric_limits<std::int64_t>::min());
  EXPECT_DOUBLE_EQ(load_text(dir, "model:\n  dropout: !!float 0.25\n").model.dropout, 0.25);
  NMT_EXPECT_THROW_WITH(load_text(dir, "model:\n  layers: !!str 1\n"), ConfigError,
                        "config.yaml:2:3", "model.layers", "expected an integer",
                        "the string !!str '1'");
  NMT_EXPECT_THROW_WITH(load_text(dir, "model:\n  layers: \"6\"\n"), ConfigError, "model.layers",
                        "the quoted string '6'");
  NMT_EXPECT_THROW_WITH(load_text(dir, "model:\n  dropout: '0.1'\n"), ConfigError, "model.dropout",
                        "the quoted string '0.1'");
  NMT_EXPECT_THROW_WITH(load_text(dir, "model:\n  shared: !!str true\n"), ConfigError,
                        "model.shared", "expected a boolean");
  NMT_EXPECT_THROW_WITH(load_text(dir, "model:\n  sizes: [1, '2']\n"), ConfigError, "model.sizes",
                        "item 1");
  for (const char* bad : {"1_000", "0x", "0o8", "1e3", "--1", "+-1", "0x-1", "2147483648"}) {
    NMT_EXPECT_THROW_WITH(load_text(dir, fmt::format("model:\n  layers: {}\n", bad)), ConfigError,
                          "model.layers", "expected an integer");
  }
  EXPECT_EQ(load_text(dir, "model:\n  positions: 123\n").model.positions, "123")
      << "a plain number is still a string where a string is read";
}

// A config is a regular file of at most kMaxConfigFileBytes: a device or a directory is refused
// naming it, before anything is read.
TEST(ConfigLoader, ConfigThatIsNoRegularFileIsRefused) {
  TempDir dir;
  std::filesystem::create_symlink("/dev/zero", dir.file("zero.yaml"));
  NMT_EXPECT_THROW_WITH(load_yaml_file(dir.file("zero.yaml")), ConfigError, "zero.yaml",
                        "a character device, not a regular file");
  NMT_EXPECT_THROW_WITH(load_yaml_file(dir.path().string()), ConfigError,
                        "a directory, not a regular file");
  write_text(dir.file("huge.yaml"), "");
  std::filesystem::resize_file(dir.file("huge.yaml"), kMaxConfigFileBytes + 1);
  NMT_EXPECT_THROW_WITH(load_yaml_file(dir.file("huge.yaml")), ConfigError, "huge.yaml",
                        "over the limit");
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
  NMT_EXPECT_THROW_WITH(load_sample(root2, path), ConfigError,
                        "--set model.d_model=wide: expected an integer");
}

Sample load_overridden(const std::vector<std::string>& assignments) {
  YAML::Node root(YAML::NodeType::Map);
  for (const auto& a : assignments) apply_override(root, a);
  return load_sample(root, "--set");
}

// `layers:` with nothing after it, `~` and `null` are YAML's null: no value, not the default.
TEST(ConfigLoader, NullValuesAreRefusedNamingFileLineAndKey) {
  TempDir dir;
  for (const char* null : {"", " ~", " null", " Null", " NULL"}) {
    NMT_EXPECT_THROW_WITH(load_text(dir, std::string("model:\n  layers:") + null + "\n"),
                          ConfigError, "config.yaml:2:3: model.layers: no value (YAML null)",
                          "expected an integer");
  }
  NMT_EXPECT_THROW_WITH(load_text(dir, "data:\n  valid_split: ~\n"), ConfigError,
                        "config.yaml:2:3: data.valid_split: no value", "\"\" for none");
  NMT_EXPECT_THROW_WITH(load_text(dir, "model:\n  sizes:\n"), ConfigError,
                        "config.yaml:2:3: model.sizes: no value", "a list of integers");
  NMT_EXPECT_THROW_WITH(load_text(dir, "model:\nsteps: 3\n"), ConfigError,
                        "config.yaml:1:1: model: no value", "a mapping");
  NMT_EXPECT_THROW_WITH(load_text(dir, "model: {layers: 2, shared: }\n"), ConfigError,
                        "config.yaml:1:20: model.shared: no value", "a boolean");
}

TEST(ConfigLoader, NullOverridesAreRefusedNamingTheFlag) {
  for (const char* value : {"~", "null", "Null", "NULL", "{d_model: ~}"}) {
    const std::string flag = std::string("model.layers=") + value;
    NMT_EXPECT_THROW_WITH(load_overridden({flag}), ConfigError, "--set " + flag + ": no value");
  }
}

// `--set key=` is the empty string: a value for the string keys that take one, refused by the
// others with the flag and the type they expect.
TEST(ConfigLoader, EmptyOverridesAreTheEmptyString) {
  NMT_EXPECT_THROW_WITH(load_overridden({"model.layers="}), ConfigError,
                        "--set model.layers=: empty value; expected an integer");
  NMT_EXPECT_THROW_WITH(load_overridden({"model.shared="}), ConfigError,
                        "--set model.shared=: empty value; expected a boolean");
  NMT_EXPECT_THROW_WITH(load_overridden({"data.train_split="}), ConfigError,
                        "--set data.train_split=: empty value; expected a non-empty string");
  EXPECT_EQ(load_overridden({"data.valid_split="}).data.valid_split, "");
  EXPECT_EQ(load_overridden({"data.valid_split=\"\""}).data.valid_split, "");
  EXPECT_EQ(load_overridden({"data.valid_split=test"}).data.valid_split, "test");
}

TEST(ConfigLoader, EmptyStringsOnlyWhereTheKeyTakesThem) {
  TempDir dir;
  EXPECT_EQ(load_text(dir, "data:\n  valid_split: \"\"\n").data.valid_split, "");
  EXPECT_EQ(load_text(dir, "data:\n  valid_split: ''\n").data.valid_split, "");
  NMT_EXPECT_THROW_WITH(load_text(dir, "data:\n  train_split: \"\"\n"), ConfigError,
                        "config.yaml:2:3: data.train_split: empty value",
                        "expected a non-empty string");
  NMT_EXPECT_THROW_WITH(load_text(dir, "model:\n  layers: ''\n"), ConfigError,
                        "config.yaml:2:3: model.layers: empty value", "expected an integer");
}

// yaml-cpp reads the first document of a stream; a config is one document, so a second one is an
// error rather than settings dropped. A `---` that opens the only document is fine.
TEST(ConfigLoader, ASecondYamlDocumentIsRefusedNamingItsLine) {
  TempDir dir;
  NMT_EXPECT_THROW_WITH(load_text(dir, "model:\n  layers: 2\n---\nmodel:\n  layers: 4\n"),
                        ConfigError, "config.yaml:3:1: a second YAML document");
  NMT_EXPECT_THROW_WITH(load_text(dir, "---\nsteps: 1\n---\n"), ConfigError,
                        "config.yaml:3:1: a second YAML document");
  NMT_EXPECT_THROW_WITH(load_text(dir, "steps: 1\n...\nsteps: 2\n"), ConfigError,
                        "config.yaml:3:1: a second YAML document");
  EXPECT_EQ(load_text(dir, "---\nmodel:\n  layers: 2\n").model.layers, 2);
  EXPECT_EQ(load_text(dir, "# the base\n---\nsteps: 3\n...\n").steps, 3);
}

}  // namespace
}  // namespace nmt
