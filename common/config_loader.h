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
// exactly the same rules (an override of an unknown key fails at finish()), and errors about a
// key they set name the flag:
//   --set model.layers=: empty value; expected an integer
//
// A key is either absent (its default) or has a value: no key takes a YAML null (`key:` with
// nothing after it, `~`, `null`), which would otherwise read as the default without a word. The
// empty string ("" in YAML, `--set key=`) is a value only for the string keys read with
// EmptyString::kAllowed, where it means "none"; every other key refuses it.

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace nmt {

// The largest config file read: a run's config is a few kilobytes.
inline constexpr std::uint64_t kMaxConfigFileBytes = 16u << 20;

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Parses a YAML file of one document (a leading `---` is fine); a missing file, a syntax error or
// a second document is a ConfigError naming the file and line.
YAML::Node load_yaml_file(const std::string& path);

// Applies "a.b.c=value" to `root` (value parsed as YAML, so "512", "0.1", "true", "[1, 2]" keep
// their types; nothing after '=' is the empty string). Intermediate mappings are created; the key
// is validated later by the loaders. A null value (`~`, `null`) anywhere in it is a ConfigError.
void apply_override(YAML::Node& root, const std::string& assignment);

// Whether a string key takes the empty string as a value.
enum class EmptyString { kRefused, kAllowed };

// One YAML mapping being read into a struct. Copies share the record of keys read.
class ConfigSection {
 public:
  // `source` names where the YAML came from (a file path); `path` is the dotted key prefix.
  ConfigSection(YAML::Node node, std::string source, std::string path = "");

  void read(const std::string& key, bool& value) const;
  void read(const std::string& key, int& value) const;
  void read(const std::string& key, std::int64_t& value) const;
  void read(const std::string& key, double& value) const;
  void read(const std::string& key, std::string& value,
            EmptyString empty = EmptyString::kRefused) const;
  void read(const std::string& key, std::vector<std::string>& value) const;
  void read(const std::string& key, std::vector<std::int64_t>& value) const;
  void read(const std::string& key, std::vector<double>& value) const;

  // A nested mapping; absent yields an empty section (all defaults kept), null is an error.
  ConfigSection section(const std::string& key) const;
  // A list of mappings (e.g. corpora); absent yields an empty list, null (the list's or an item's)
  // is an error. Items are named "key[i]".
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
  // "file:line:col: section.key: " for a key of the file, "--set section.key=value: " for one an
  // override set.
  std::string origin(const YAML::Node& key, const YAML::Node& value) const;
  // The key's value, undefined when absent; null is an error.
  YAML::Node present(const std::string& key, const std::string& expected) const;
  template <typename T>
  void read_scalar(const std::string& key, T& value, const std::string& expected,
                   EmptyString empty = EmptyString::kRefused) const;
  template <typename T>
  void read_list(const std::string& key, std::vector<T>& value, const char* expected) const;

  YAML::Node node_;
  std::string source_;
  std::string path_;
  std::shared_ptr<std::set<std::string>> known_;
};

}  // namespace nmt
