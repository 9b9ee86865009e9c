#pragma once
// Strict YAML loading for the plain config structs of every tool.
//
// A loader function per struct reads its fields through a ConfigSection and calls finish():
//
//   void load(const ConfigSection& s, ModelConfig& c) {
//     s.read("d_model", c.d_model);   // absent: keeps the struct's default
//     s.read("d_ff", c.d_ff);
//     s.finish();                     // any other key is an error
//   }
//
// Errors are ConfigError and name the file, line, dotted key and expected type, for example
//   configs/base.yaml:4:12: model.d_model: expected an integer, got 'big'
// `--set key=value` overrides are applied to the YAML tree before loading, so they are checked by
// exactly the same rules (an override of an unknown key fails at finish()).

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace nmt {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses a YAML file; a missing file or a syntax error is a ConfigError naming file and line.
YAML::Node load_yaml_file(const std::string& path);

// Applies "a.b.c=value" to `root` (value parsed as YAML, so "512", "0.1", "true", "[1, 2]" keep
// their types). Intermediate mappings are created; the key is validated later by the loaders.
void apply_override(YAML::Node& root, const std::string& assignment);

// One YAML mapping being read into a struct. Copies share the record of keys read.
class ConfigSection {
 public:
  // `source` names where the YAML came from (a file path); `path` is the dotted key prefix.
  ConfigSection(YAML::Node node, std::string source, std::string path = "");

  void read(const std::string& key, bool& value) const;
  void read(const std::string& key, int& value) const;
  void read(const std::string& key, std::int64_t& value) const;
  void read(const std::string& key, double& value) const;
  void read(const std::string& key, std::string& value) const;
  void read(const std::string& key, std::vector<std::string>& value) const;
  void read(const std::string& key, std::vector<std::int64_t>& value) const;
  void read(const std::string& key, std::vector<double>& value) const;

  // A nested mapping; absent yields an empty section (all defaults kept).
  ConfigSection section(const std::string& key) const;
  // A list of mappings (e.g. corpora); absent yields an empty list. Items are named "key[i]".
  std::vector<ConfigSection> section_list(const std::string& key) const;
  bool has(const std::string& key) const;

  // Throws for the first key present in the YAML that no read()/section() asked for, listing the
  // keys this section knows.
  void finish() const;

  // Builds a ConfigError located at `key` (or at the section when key is empty).
  ConfigError error(const std::string& key, const std::string& message) const;

 private:
  YAML::Node child(const std::string& key) const;
  std::string dotted(const std::string& key) const;
  std::string location(const YAML::Node& node) const;
  template <typename T>
  void read_scalar(const std::string& key, T& value, const char* expected) const;
  template <typename T>
  void read_list(const std::string& key, std::vector<T>& value, const char* expected) const;

  YAML::Node node_;
  std::string source_;
  std::string path_;
  std::shared_ptr<std::set<std::string>> known_;
};

}  // namespace nmt
