#include "common/config_loader.h"

#include <fmt/format.h>

#include <yaml-cpp/eventhandler.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string_view>

#include "common/checked_paths.h"

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

constexpr const char* kStrTag = "tag:yaml.org,2002:str";

std::string describe(const YAML::Node& node) {
  if (node.IsScalar() && node.Tag() == "!") return "the quoted string '" + node.Scalar() + "'";
  if (node.IsScalar() && node.Tag() == kStrTag) return "the string !!str '" + node.Scalar() + "'";
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

// An integer as YAML 1.2's core schema writes one (docs/config.md, "Values"): decimal digits
// with an optional sign (a leading 0 is still decimal: 012 is 12), 0o and octal digits, 0x and hex
// digits; within T's range.
template <typename T>
bool parse_integer(const std::string& text, T& out) {
  std::string_view digits = text;
  int base = 10;
  bool negative = false;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'o')) {
    base = digits[1] == 'x' ? 16 : 8;
    digits.remove_prefix(2);
  } else if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  if (digits.empty() || !std::isxdigit(static_cast<unsigned char>(digits[0]))) return false;
  std::uint64_t magnitude = 0;
  const auto [end, error] =
      std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  if (error != std::errc() || end != digits.data() + digits.size()) return false;
  const auto largest = static_cast<std::uint64_t>(std::numeric_limits<T>::max());
  if (!negative) {
    if (magnitude > largest) return false;
    out = static_cast<T>(magnitude);
  } else {
    if (magnitude > largest + 1) return false;
    out = magnitude == largest + 1 ? std::numeric_limits<T>::min()
                                   : static_cast<T>(-static_cast<T>(magnitude));
  }
  return true;
}

// Whether a scalar may be read as a number or a boolean: a plain one (tag "?", or none for a
// --set value) or one tagged as that type (`tag`). A quoted or !!str-tagged scalar is a string,
// as YAML's core schema reads it: `layers: "6"` is no integer.
bool untagged_or(const YAML::Node& node, std::initializer_list<const char*> tags) {
  const std::string& tag = node.Tag();
  if (tag.empty() || tag == "?") return true;
  for (const char* t : tags) {
    if (tag == t) return true;
  }
  return false;
}

template <typename T>
bool convert_scalar(const YAML::Node& node, T& out) {
  if (!node.IsScalar()) return false;
  if constexpr (std::is_same_v<T, bool>) {
    return untagged_or(node, {"tag:yaml.org,2002:bool"}) && parse_bool(node.Scalar(), out);
  } else if constexpr (std::is_same_v<T, std::string>) {
    out = node.Scalar();
    return true;
  } else if constexpr (std::is_floating_point_v<T>) {
    // .inf and .nan are YAML numbers, but no setting means them: a typo or a copied .nan.
    return untagged_or(node, {"tag:yaml.org,2002:float", "tag:yaml.org,2002:int"}) &&
           YAML::convert<T>::decode(node, out) && std::isfinite(out);
  } else {
    return untagged_or(node, {"tag:yaml.org,2002:int"}) && parse_integer(node.Scalar(), out);
  }
}

// Records where each document of a YAML stream starts: its `---`, or its first token.
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> marks;

  void OnDocumentStart(const YAML::Mark& mark) override { marks.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// Where a second YAML document starts in `text`, if one does: YAML::Load reads the first document
// and drops the others without a word.
std::optional<YAML::Mark> second_document(const std::string& text) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts starts;
  while (starts.marks.size() < 2 && parser.HandleNextDocument(starts)) continue;
  if (starts.marks.size() < 2) return std::nullopt;
  return starts.marks[1];
}

bool holds_null(const YAML::Node& node) {
  if (node.IsNull()) return true;
  for (const auto& item : node) {
    if (node.IsMap() ? holds_null(item.first) || holds_null(item.second) : holds_null(item)) {
      return true;
    }
  }
  return false;
}

// A copy of a parsed --set value whose nodes carry no position: the positions are in the flag's
// text, and errors would report them as lines of the config file.
YAML::Node unmarked(const YAML::Node& node) {
  if (node.IsScalar()) return YAML::Node(node.Scalar());
  YAML::Node copy(node.Type());
  for (const auto& item : node) {
    if (node.IsMap()) {
      copy[unmarked(item.first)] = unmarked(item.second);
    } else {
      copy.push_back(unmarked(item));
    }
  }
  return copy;
}

// The value of `--set key=text`; an empty text is the empty string, as `key=""` is, where YAML
// would read null.
YAML::Node override_value(const std::string& key, const std::string& text) {
  const std::string assignment = key + "=" + text;
  if (text.empty()) return YAML::Node(std::string());
  YAML::Node value;
  try {
    if (second_document(text)) {
      throw ConfigError(
          fmt::format("--set {}: the value holds more than one YAML document", assignment));
    }
    value = unmarked(YAML::Load(text));
  } catch (const YAML::Exception& e) {
    throw ConfigError(fmt::format("--set {}: cannot parse the value: {}", assignment, e.msg));
  }
  if (holds_null(value)) {
    throw ConfigError(fmt::format(
        "--set {}: no value (YAML null); give one, or leave the flag out to keep the default "
        "(--set {}= is the empty string, for the keys that take one)",
        assignment, key));
  }
  return value;
}

// A value as its --set flag would write it.
std::string flag_value(const YAML::Node& value) {
  if (value.IsScalar()) return value.Scalar();
  YAML::Emitter out;
  out << YAML::Flow << value;
  return out.c_str();
}

}  // namespace

YAML::Node load_yaml_file(const std::string& path) {
  std::string contents;
  try {
    contents = read_regular_file(path, kMaxConfigFileBytes, "the config file");
  } catch (const std::runtime_error& e) {
    throw ConfigError(e.what());
  }
  try {
    if (const auto second = second_document(contents)) {
      throw ConfigError(fmt::format(
          "{}:{}:{}: a second YAML document starts here; a config file holds one document (a "
          "leading '---' is fine): merge the two, or split them into files of their own",
          path, second->line + 1, second->column + 1));
    }
    YAML::Node root = YAML::Load(contents);
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
  const std::string key = assignment.substr(0, eq);
  const auto parts = split_dotted(key, "--set " + assignment);
  const YAML::Node value = override_value(key, assignment.substr(eq + 1));
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
  // Remove first so the key node is new: it then carries no file position, which is how errors
  // about it know to name the flag rather than a line of the file.
  chain.back().remove(parts.back());
  chain.back()[parts.back()] = value;
}

ConfigSection::ConfigSection(YAML::Node node, std::string source, std::string path)
    // A missing key yields an "invalid" yaml-cpp node that throws on most calls, and a null one
    // (the empty document) holds no keys: hold an empty mapping instead.
    : node_(node.IsDefined() && !node.IsNull() ? node : YAML::Node(YAML::NodeType::Map)),
      source_(std::move(source)),
      path_(std::move(path)),
      known_(std::make_shared<std::set<std::string>>()) {
  if (!node_.IsMap()) {
    throw ConfigError(fmt::format("{}{}: expected a mapping, got {}", location(node_),
                                  path_.empty() ? "config" : path_, describe(node_)));
  }
  // yaml-cpp keeps both copies of a repeated key and lookups see the first: refuse, so that no
  // setting is silently ignored.
  std::map<std::string, YAML::Node> seen;
  for (const auto& entry : node_) {
    const auto [first, inserted] = seen.emplace(entry.first.Scalar(), entry.first);
    if (!inserted) {
      const auto earlier = location(first->second);  // "file:line:col: "
      throw ConfigError(location(entry.first) + fmt::format("duplicate key '{}' (first at {})",
                                                            dotted(first->first),
                                                            earlier.substr(0, earlier.size() - 2)));
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

std::string ConfigSection::origin(const YAML::Node& key, const YAML::Node& value) const {
  if (key.Mark().is_null())
    return fmt::format("--set {}={}: ", dotted(key.Scalar()), flag_value(value));
  return location(key) + dotted(key.Scalar()) + ": ";
}

YAML::Node ConfigSection::child(const std::string& key) const {
  known_->insert(key);
  return node_[key];
}

YAML::Node ConfigSection::present(const std::string& key, const std::string& expected) const {
  const YAML::Node n = child(key);
  if (n.IsDefined() && n.IsNull()) {
    throw error(key, fmt::format("no value (YAML null); expected {}; leave the key out to keep "
                                 "its default",
                                 expected));
  }
  return n;
}

bool ConfigSection::has(const std::string& key) const {
  return node_[key].IsDefined() && !node_[key].IsNull();
}

ConfigError ConfigSection::error(const std::string& key, const std::string& message) const {
  if (!key.empty()) {
    for (const auto& entry : node_) {
      if (entry.first.Scalar() == key)
        return ConfigError(origin(entry.first, entry.second) + message);
    }
  }
  return ConfigError(location(node_) + (key.empty() ? path_ : dotted(key)) + ": " + message);
}

template <typename T>
void ConfigSection::read_scalar(const std::string& key, T& value, const std::string& expected,
                                EmptyString empty) const {
  const YAML::Node n = present(key, expected);
  if (!n.IsDefined()) return;
  const bool empty_allowed = std::is_same_v<T, std::string> && empty == EmptyString::kAllowed;
  if (n.IsScalar() && n.Scalar().empty() && !empty_allowed) {
    throw error(key, "empty value; expected " + expected);
  }
  T parsed{};
  if (!convert_scalar(n, parsed)) {
    throw error(key, fmt::format("expected {}, got {}", expected, describe(n)));
  }
  value = parsed;
}

template <typename T>
void ConfigSection::read_list(const std::string& key, std::vector<T>& value,
                              const char* expected) const {
  const YAML::Node n = present(key, fmt::format("a list of {} ([] for none)", expected));
  if (!n.IsDefined()) return;
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
void ConfigSection::read(const std::string& key, std::string& value, EmptyString empty) const {
  read_scalar(key, value,
              empty == EmptyString::kAllowed ? "a string (\"\" for none)" : "a non-empty string",
              empty);
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
  return ConfigSection(present(key, "a mapping ({} for no settings)"), source_, dotted(key));
}

std::vector<ConfigSection> ConfigSection::section_list(const std::string& key) const {
  const YAML::Node n = present(key, "a list of mappings ([] for none)");
  std::vector<ConfigSection> items;
  if (!n.IsDefined()) return items;
  if (!n.IsSequence()) throw error(key, fmt::format("expected a list, got {}", describe(n)));
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (n[i].IsNull())
      throw error(key, fmt::format("item {}: no value (YAML null); expected a mapping", i));
    items.emplace_back(n[i], source_, fmt::format("{}[{}]", dotted(key), i));
  }
  return items;
}

void ConfigSection::finish() const {
  for (const auto& entry : node_) {
    const std::string key = entry.first.Scalar();
    if (known_->count(key)) continue;
    std::string valid;
    for (const auto& k : *known_) valid += (valid.empty() ? "" : ", ") + k;
    const std::string where =
        entry.first.Mark().is_null() ? origin(entry.first, entry.second) : location(entry.first);
    throw ConfigError(where + fmt::format("unknown key '{}' (valid keys{}: {})", dotted(key),
                                          path_.empty() ? "" : " in '" + path_ + "'", valid));
  }
}

}  // namespace nmt
