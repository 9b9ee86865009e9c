#include "common/config_loader.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <map>

namespace nmt {
namespace {

std::vector<std::string> split_dotted(const std::string& key, const std::string& context) {
  std::vector<std::string> parts;
  std::string part;
  for (char c : key) {
    if (c == '.') {
      parts.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  parts.push_back(part);
  for (const auto& p : parts) {
    if (p.empty()) throw ConfigError(fmt::format("{}: malformed key '{}'", context, key));
  }
  return parts;
}

std::string describe(const YAML::Node& node) {
  if (node.IsScalar()) return "'" + node.Scalar() + "'";
  if (node.IsSequence()) return "a list";
  if (node.IsMap()) return "a mapping";
  return "null";
}

// yaml-cpp's bool conversion also accepts y/n/on/off; configs are clearer with true/false only.
bool parse_bool(const std::string& s, bool& out) {
  if (s == "true" || s == "True" || s == "TRUE") return out = true, true;
  if (s == "false" || s == "False" || s == "FALSE") return out = false, true;
  return false;
}

template <typename T>
bool convert_scalar(const YAML::Node& node, T& out) {
  if (!node.IsScalar()) return false;
  if constexpr (std::is_same_v<T, bool>) {
    return parse_bool(node.Scalar(), out);
  } else if constexpr (std::is_same_v<T, std::string>) {
    out = node.Scalar();
    return true;
  } else if constexpr (std::is_floating_point_v<T>) {
    // .inf and .nan are YAML numbers, but no setting means them: a typo or a copied .nan.
    return YAML::convert<T>::decode(node, out) && std::isfinite(out);
  } else {
    return YAML::convert<T>::decode(node, out);
  }
}

}  // namespace

YAML::Node load_yaml_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(fmt::format("{}: cannot open config file", path));
  try {
    YAML::Node root = YAML::Load(in);
    if (root.IsNull()) return YAML::Node(YAML::NodeType::Map);
    if (!root.IsMap()) {
      throw ConfigError(fmt::format("{}: expected a mapping of sections at the top level", path));
    }
    return root;
  } catch (const YAML::Exception& e) {
    throw ConfigError(fmt::format("{}:{}:{}: YAML syntax error: {}", path, e.mark.line + 1,
                                  e.mark.column + 1, e.msg));
  }
}

void apply_override(YAML::Node& root, const std::string& assignment) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw ConfigError(
        fmt::format("--set {}: expected key=value, e.g. model.d_model=256", assignment));
  }
  const auto parts = split_dotted(assignment.substr(0, eq), "--set " + assignment);
  YAML::Node value;
  try {
    value = YAML::Load(assignment.substr(eq + 1));
  } catch (const YAML::Exception& e) {
    throw ConfigError(fmt::format("--set {}: cannot parse the value: {}", assignment, e.msg));
  }
  // Walk down with fresh handles: yaml-cpp's operator= on a held Node would overwrite the node it
  // refers to instead of rebinding the handle.
  std::vector<YAML::Node> chain{root};
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node next = chain.back()[parts[i]];
    if (next.IsDefined() && !next.IsNull() && !next.IsMap()) {
      throw ConfigError(fmt::format("--set {}: '{}' is not a section", assignment, parts[i]));
    }
    if (!next.IsDefined() || next.IsNull())
      chain.back()[parts[i]] = YAML::Node(YAML::NodeType::Map);
    chain.push_back(chain.back()[parts[i]]);
  }
  // Remove first so the key node is new: it then carries no file position and errors about it
  // point at --set rather than at the line it replaced.
  chain.back().remove(parts.back());
  chain.back()[parts.back()] = value;
}

ConfigSection::ConfigSection(YAML::Node node, std::string source, std::string path)
    // A missing key yields an "invalid" yaml-cpp node that throws on most calls: hold null instead.
    : node_(node.IsDefined() ? node : YAML::Node()),
      source_(std::move(source)),
      path_(std::move(path)),
      known_(std::make_shared<std::set<std::string>>()) {
  if (node_.IsDefined() && !node_.IsNull() && !node_.IsMap()) {
    throw ConfigError(fmt::format("{}{}: expected a mapping, got {}", location(node_),
                                  path_.empty() ? "config" : path_, describe(node_)));
  }
  // yaml-cpp keeps both copies of a repeated key and lookups see the first: refuse, so that no
  // setting is silently ignored.
  if (node_.IsMap()) {
    std::map<std::string, YAML::Node> seen;
    for (const auto& entry : node_) {
      const auto [first, inserted] = seen.emplace(entry.first.Scalar(), entry.first);
      if (!inserted) {
        const auto earlier = location(first->second);  // "file:line:col: "
        throw ConfigError(location(entry.first) +
                          fmt::format("duplicate key '{}' (first at {})", dotted(first->first),
                                      earlier.substr(0, earlier.size() - 2)));
      }
    }
  }
}

std::string ConfigSection::dotted(const std::string& key) const {
  return path_.empty() ? key : path_ + "." + key;
}

std::string ConfigSection::location(const YAML::Node& node) const {
  const auto mark = node.Mark();
  // Nodes created by --set overrides carry no position in the file.
  if (mark.is_null() || mark.line < 0) return source_ + " (or --set): ";
  return fmt::format("{}:{}:{}: ", source_, mark.line + 1, mark.column + 1);
}

YAML::Node ConfigSection::child(const std::string& key) const {
  known_->insert(key);
  if (!node_.IsDefined() || node_.IsNull()) return YAML::Node();
  return node_[key];
}

bool ConfigSection::has(const std::string& key) const {
  return node_.IsMap() && node_[key].IsDefined() && !node_[key].IsNull();
}

ConfigError ConfigSection::error(const std::string& key, const std::string& message) const {
  // Locate by the key node: values given by --set are parsed separately and carry marks of their
  // own text, while their key nodes carry none, which location() reports as "(or --set)".
  YAML::Node where = node_;
  if (!key.empty() && node_.IsMap()) {
    for (const auto& entry : node_) {
      if (entry.first.Scalar() == key) where = entry.first;
    }
  }
  return ConfigError(location(where) + (key.empty() ? path_ : dotted(key)) + ": " + message);
}

template <typename T>
void ConfigSection::read_scalar(const std::string& key, T& value, const char* expected) const {
  const YAML::Node n = child(key);
  if (!n.IsDefined() || n.IsNull()) return;
  T parsed{};
  if (!convert_scalar(n, parsed)) {
    throw error(key, fmt::format("expected {}, got {}", expected, describe(n)));
  }
  value = parsed;
}

template <typename T>
void ConfigSection::read_list(const std::string& key, std::vector<T>& value,
                              const char* expected) const {
  const YAML::Node n = child(key);
  if (!n.IsDefined() || n.IsNull()) return;
  if (!n.IsSequence())
    throw error(key, fmt::format("expected a list of {}, got {}", expected, describe(n)));
  std::vector<T> parsed;
  for (std::size_t i = 0; i < n.size(); ++i) {
    T item{};
    if (!convert_scalar(n[i], item)) {
      throw error(key, fmt::format("item {}: expected {}, got {}", i, expected, describe(n[i])));
    }
    parsed.push_back(std::move(item));
  }
  value = std::move(parsed);
}

void ConfigSection::read(const std::string& key, bool& value) const {
  read_scalar(key, value, "a boolean (true or false)");
}
void ConfigSection::read(const std::string& key, int& value) const {
  read_scalar(key, value, "an integer");
}
void ConfigSection::read(const std::string& key, std::int64_t& value) const {
  read_scalar(key, value, "an integer");
}
void ConfigSection::read(const std::string& key, double& value) const {
  read_scalar(key, value, "a finite number");
}
void ConfigSection::read(const std::string& key, std::string& value) const {
  read_scalar(key, value, "a string");
}
void ConfigSection::read(const std::string& key, std::vector<std::string>& value) const {
  read_list(key, value, "strings");
}
void ConfigSection::read(const std::string& key, std::vector<std::int64_t>& value) const {
  read_list(key, value, "integers");
}
void ConfigSection::read(const std::string& key, std::vector<double>& value) const {
  read_list(key, value, "finite numbers");
}

ConfigSection ConfigSection::section(const std::string& key) const {
  return ConfigSection(child(key), source_, dotted(key));
}

std::vector<ConfigSection> ConfigSection::section_list(const std::string& key) const {
  const YAML::Node n = child(key);
  std::vector<ConfigSection> items;
  if (!n.IsDefined() || n.IsNull()) return items;
  if (!n.IsSequence()) throw error(key, fmt::format("expected a list, got {}", describe(n)));
  for (std::size_t i = 0; i < n.size(); ++i) {
    items.emplace_back(n[i], source_, fmt::format("{}[{}]", dotted(key), i));
  }
  return items;
}

void ConfigSection::finish() const {
  if (!node_.IsMap()) return;
  for (const auto& entry : node_) {
    const std::string key = entry.first.Scalar();
    if (known_->count(key)) continue;
    std::string valid;
    for (const auto& k : *known_) valid += (valid.empty() ? "" : ", ") + k;
    throw ConfigError(location(entry.first) +
                      fmt::format("unknown key '{}' (valid keys{}: {})", dotted(key),
                                  path_.empty() ? "" : " in '" + path_ + "'", valid));
  }
}

}  // namespace nmt
