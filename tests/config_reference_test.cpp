// The config reference (docs/config.md) is rendered from the field lists that load and write the
// configs: every key has a description, a type, a default in YAML's spelling that loads back to
// the default, the enum's full list of choices, whether it takes the empty string (no key takes a
// YAML null) and, for the paper's recipe, the paper's value.

#include <yaml-cpp/yaml.h>

#include <map>

#include "common/config_fields.h"
#include "common/config_loader.h"
#include "preprocess/preprocess_config.h"
#include "test_utils.h"
#include "trainer/config/train_config.h"

namespace nmt {
namespace {

std::vector<ConfigReference> references() {
  return {run_config_reference(), preprocess::preprocess_config_reference()};
}

std::string dotted(const SectionDoc& section, const FieldDoc& field) {
  return section.path.empty() ? field.key : section.path + "." + field.key;
}

bool is_item_section(const SectionDoc& section) {
  return section.path.find("[]") != std::string::npos;
}

// Every key's documentation, by its dotted path.
std::map<std::string, FieldDoc> fields_of(const ConfigReference& reference) {
  std::map<std::string, FieldDoc> all;
  for (const auto& section : reference.sections) {
    for (const auto& field : section.fields) all[dotted(section, field)] = field;
  }
  return all;
}

TEST(ConfigReference, EveryFieldHasADescription) {
  for (const auto& reference : references()) {
    for (const auto& section : reference.sections) {
      for (const auto& field : section.fields) {
        EXPECT_FALSE(field.description.empty())
            << reference.title << ": " << dotted(section, field)
            << " has no description: write one beside it in the field list";
        EXPECT_FALSE(field.type.empty()) << dotted(section, field);
        EXPECT_FALSE(field.default_value.empty()) << dotted(section, field);
      }
      if (!section.path.empty()) {
        EXPECT_FALSE(section.about.empty()) << section.path;
      }
    }
  }
}

TEST(ConfigReference, RunConfigHasASectionPerStruct) {
  std::vector<std::string> paths;
  for (const auto& section : run_config_reference().sections) {
    if (!section.fields.empty()) paths.push_back(section.path);
  }
  EXPECT_EQ(paths, (std::vector<std::string>{"model", "data", "train", "checkpoint", "decode",
                                             "dist", "tracker"}));
}

TEST(ConfigReference, ThePapersRecipeIsInThePaperColumn) {
  const auto run = fields_of(run_config_reference());
  for (const char* key : {"model.layers",
                          "model.d_model",
                          "model.d_ff",
                          "model.heads",
                          "model.d_k",
                          "model.d_v",
                          "model.dropout",
                          "model.positions",
                          "model.norm",
                          "model.embedding_sharing",
                          "train.max_steps",
                          "train.warmup_steps",
                          "train.adam_beta1",
                          "train.adam_beta2",
                          "train.adam_eps",
                          "train.label_smoothing",
                          "data.max_src_tokens",
                          "data.max_tgt_tokens",
                          "checkpoint.every_minutes",
                          "decode.average_last",
                          "decode.beam",
                          "decode.alpha"}) {
    ASSERT_TRUE(run.count(key)) << key;
    EXPECT_FALSE(run.at(key).paper.empty()) << key;
  }
  EXPECT_EQ(run.at("model.d_model").paper, "512; big 1024");
  EXPECT_EQ(run.at("decode.alpha").paper, "0.6");
  EXPECT_EQ(fields_of(preprocess::preprocess_config_reference()).at("vocab.type").paper, "bpe");
}

// Setting every key to the default the reference shows gives back the default config: the
// reference names keys the loader knows, with defaults in the spelling YAML reads.
TEST(ConfigReference, DocumentedDefaultsLoadAsTheDefaults) {
  std::vector<std::string> run_overrides;
  for (const auto& section : run_config_reference().sections) {
    for (const auto& field : section.fields) {
      run_overrides.push_back(dotted(section, field) + "=" + field.default_value);
    }
  }
  EXPECT_EQ(to_yaml(load_run_config("", run_overrides)), to_yaml(RunConfig{}));

  std::vector<std::string> preprocess_overrides;
  std::string corpus = "{";
  for (const auto& section : preprocess::preprocess_config_reference().sections) {
    for (const auto& field : section.fields) {
      if (!is_item_section(section)) {
        preprocess_overrides.push_back(dotted(section, field) + "=" + field.default_value);
      } else if (field.key != "source") {  // required
        corpus += field.key + ": " + field.default_value + ", ";
      }
    }
  }
  const auto loaded = preprocess::load_preprocess_config("", preprocess_overrides);
  const preprocess::PreprocessConfig defaults;
  EXPECT_EQ(preprocess::to_yaml(loaded), preprocess::to_yaml(defaults));
  EXPECT_EQ(loaded.out, defaults.out);
  EXPECT_EQ(loaded.overwrite, defaults.overwrite);
  EXPECT_EQ(loaded.threads, defaults.threads);

  const auto one =
      preprocess::load_preprocess_config("", {"corpora.train=[" + corpus + "source: a.tsv}]"});
  ASSERT_EQ(one.split("train").corpora.size(), 1u);
  const auto& spec = one.split("train").corpora[0];
  const preprocess::CorpusSpec default_spec;
  EXPECT_EQ(spec.target, default_spec.target);
  EXPECT_EQ(spec.format, default_spec.format);
  EXPECT_EQ(spec.tsv_source_column, default_spec.tsv_source_column);
  EXPECT_EQ(spec.tsv_target_column, default_spec.tsv_target_column);
}

// The reference lists every choice the parser takes, in the parser's own order.
TEST(ConfigReference, EnumsListTheParsersChoices) {
  int enums = 0;
  for (const auto& section : run_config_reference().sections) {
    for (const auto& field : section.fields) {
      const std::string prefix = "enum: ";
      if (field.type.rfind(prefix, 0) != 0) continue;
      ++enums;
      NMT_EXPECT_THROW_WITH(load_run_config("", {dotted(section, field) + "=no-such-choice"}),
                            ConfigError, "(expected " + field.type.substr(prefix.size()) + ")");
    }
  }
  EXPECT_EQ(enums, 5);  // positions, norm, embedding_sharing, precision, backend
  EXPECT_EQ(fields_of(preprocess::preprocess_config_reference())
                .at("corpora.train[], corpora.valid[], corpora.test[].format")
                .type,
            "enum: auto, text, sgml, tsv");
}

TEST(ConfigReference, NumbersAreWrittenAsYamlReadsThem) {
  EXPECT_EQ(yaml_number(0.1), "0.1");
  EXPECT_EQ(yaml_number(25.0), "25.0");
  EXPECT_EQ(yaml_number(0.0), "0.0");
  EXPECT_EQ(yaml_number(1e-9), "1.0e-9");
  EXPECT_EQ(yaml_number(2.5e-5), "2.5e-5");
  EXPECT_EQ(yaml_number(-1e20), "-1.0e+20");
  for (double x : {0.1, 0.98, 1e-9, 1e-5, 1800.0, 3.0e17, 1.0 / 3.0}) {
    EXPECT_EQ(YAML::Load(yaml_number(x)).as<double>(), x) << yaml_number(x);
  }
  EXPECT_EQ(yaml_string(""), "\"\"");
  EXPECT_EQ(yaml_string("train"), "train");
}

TEST(ConfigReference, RendersATablePerSection) {
  const std::string text = render_config_reference(run_config_reference());
  EXPECT_EQ(text.rfind("## nmt-train\n", 0), 0u);
  for (const char* part : {"### model\n", "| key | type | default | paper | description |\n",
                           "| `d_model` | integer | `512` | 512; big 1024 | ",
                           "| `norm` | enum: post, pre | `post` | post | ",
                           "| `adam_eps` | number | `1.0e-9` | 1e-9 | ",
                           "| `dir` | string (`\"\"`: none, --data names it) | `\"\"` | ",
                           "| `valid_split` | string (`\"\"`: no validation) | `valid` | ",
                           "| `train_split` | non-empty string | `train` | ",
                           "| `seed` | integer >= 0 | `1` | ", "(5 + \\|Y\\|)"}) {
    EXPECT_NE(text.find(part), std::string::npos) << "no '" << part << "' in\n" << text;
  }
}

// The keys that take "" are the strings where it means "none"; the others refuse it.
TEST(ConfigReference, SaysWhichKeysTakeTheEmptyString) {
  std::vector<std::string> takes_empty;
  for (const auto& reference : references()) {
    for (const auto& [key, field] : fields_of(reference)) {
      if (field.empty) {
        EXPECT_EQ(field.type, "string") << key;
        EXPECT_FALSE(field.empty->empty()) << key << ": say what \"\" means";
        takes_empty.push_back(key);
      } else if (field.type.find("string") != std::string::npos) {
        EXPECT_TRUE(field.type == "non-empty string" || field.type == "list of strings") << key;
      }
    }
  }
  EXPECT_EQ(takes_empty,
            (std::vector<std::string>{"data.dir", "data.valid_split", "tracker.ca_file",
                                      "tracker.port_file", "tracker.row_label", "tracker.run_name",
                                      "tracker.sweep", "tracker.token_file", "tracker.url",
                                      "corpora.train[], corpora.valid[], corpora.test[].target",
                                      "out", "spm_model"}));
  EXPECT_EQ(fields_of(run_config_reference()).at("data.valid_split").empty, "no validation");
}

// What the reference says of each run-config and nmt-preprocess key holds when loading: no key
// takes a YAML null (`key:`, `~`, `null`) from a file or a --set flag; a key that takes "" takes
// it as `key: ""` and as `--set key=`, and every other key refuses both, naming file and line or
// the flag.
template <typename Load>
void expect_empty_and_null_as_documented(const ConfigReference& reference, Load load) {
  testing::TempDir dir;
  const auto file = dir.file("c.yaml");
  for (const auto& section : reference.sections) {
    if (is_item_section(section)) continue;  // preprocess_config_test covers the corpora's keys
    const std::string indent = section.path.empty() ? "" : "  ";
    const std::string line = section.path.empty() ? "1:1" : "2:3";
    const auto write_value = [&](const FieldDoc& field, const std::string& value) {
      testing::write_text(file, (section.path.empty() ? "" : section.path + ":\n") + indent +
                                    field.key + ":" + value + "\n");
    };
    for (const auto& field : section.fields) {
      const std::string key = dotted(section, field);
      for (const char* null : {"", " ~", " null", " NULL"}) {
        write_value(field, null);
        NMT_EXPECT_THROW_WITH(load(file, {}), ConfigError,
                              "c.yaml:" + line + ": " + key + ": no value (YAML null)");
      }
      for (const char* null : {"~", "null"}) {
        NMT_EXPECT_THROW_WITH(load("", {key + "=" + null}), ConfigError,
                              "--set " + key + "=" + null + ": no value (YAML null)");
      }
      write_value(field, " \"\"");
      if (field.empty) {
        EXPECT_NO_THROW(load(file, {})) << key;
        EXPECT_NO_THROW(load("", {key + "="})) << key;
      } else {
        NMT_EXPECT_THROW_WITH(load(file, {}), ConfigError, "c.yaml:" + line + ": " + key + ": ");
        NMT_EXPECT_THROW_WITH(load("", {key + "="}), ConfigError, "--set " + key + "=: ");
      }
    }
  }
}

TEST(ConfigReference, EmptyAndNullValuesLoadAsTheReferenceSays) {
  expect_empty_and_null_as_documented(run_config_reference(),
                                      [](const std::string& path, std::vector<std::string> sets) {
                                        return load_run_config(path, sets);
                                      });
  expect_empty_and_null_as_documented(preprocess::preprocess_config_reference(),
                                      [](const std::string& path, std::vector<std::string> sets) {
                                        return preprocess::load_preprocess_config(path, sets);
                                      });
}

// --set data.valid_split= turns validation off as `valid_split: ""` does; --set model.layers= and
// its null spellings are refused, where they once trained the default 6 layers.
TEST(ConfigReference, EmptyOverridesOfTheRunConfig) {
  EXPECT_EQ(load_run_config("", {"data.valid_split="}).data.valid_split, "");
  EXPECT_EQ(load_run_config("", {"data.valid_split=\"\""}).data.valid_split, "");
  testing::TempDir dir;
  testing::write_text(dir.file("run.yaml"), "data:\n  valid_split: \"\"\n");
  EXPECT_EQ(load_run_config(dir.file("run.yaml")).data.valid_split, "");
  NMT_EXPECT_THROW_WITH(load_run_config("", {"model.layers="}), ConfigError,
                        "--set model.layers=: empty value; expected an integer");
  for (const char* null : {"~", "null"}) {
    NMT_EXPECT_THROW_WITH(load_run_config("", {std::string("model.layers=") + null}), ConfigError,
                          std::string("--set model.layers=") + null + ": no value");
  }
  for (const char* null : {" ~", ""}) {
    testing::write_text(dir.file("run.yaml"), std::string("model:\n  layers:") + null + "\n");
    NMT_EXPECT_THROW_WITH(load_run_config(dir.file("run.yaml")), ConfigError,
                          "run.yaml:2:3: model.layers: no value (YAML null); expected an integer");
  }
}

}  // namespace
}  // namespace nmt
