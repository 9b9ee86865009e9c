#pragma once
// Config structs as field lists. Each struct's keys are declared once, with what they mean, in a
// function template beside its loader:
//
//   template <typename V>
//   void fields(V& v, DecodeConfig& d) {
//     v("beam", d.beam, "Beam size; 1: greedy.", Paper{"4"});
//   }
//   template <typename V>
//   void fields(V& v, DataConfig& d) {
//     v("train_split", d.train_split, "The split trained on.");  // "" refused
//     v("valid_split", d.valid_split, "The split validated on.", Empty{"no validation"});
//   }
//   template <typename V>
//   void fields(V& v, RunConfig& c) {
//     v.section("decode", c.decode, "How a trained run is turned into translations.");
//   }
//
// and that one list drives loading (FieldReader, strict through ConfigSection), writing
// (FieldWriter, YAML) and the reference (document_fields, rendered into docs/config.md). A visitor
// is called as v(key, value, about[, notes]) for a scalar, an enum or a list of scalars (notes: a
// Paper, an Empty, or {Paper{...}, Empty{...}});
// v.section(key, s, about) for a nested mapping; v.items(key, list, about) for a list of mappings.
// The visitors find the `fields` of a nested struct by argument-dependent lookup, as nlohmann::json
// finds to_json: declare it in namespace nmt or in the struct's own namespace.
//
// An item type whose keys depend on each other declares, beside its field list,
//   void check_item(const CorpusEntry& corpus, const ConfigSection& where);
// which the FieldReader calls on each item as it reads it, with the item's mapping for errors
// (where.error(key, what)); preprocess_config.cpp has one.
//
// An enum field is named in YAML through ConfigEnum<Enum>, specialized beside the field list from
// the enum's parser and printer (common/named_choices.h).

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "common/config_loader.h"
#include "common/config_reference.h"

namespace nmt {

// The paper's value of a setting (Vaswani et al. 2017: base and big recipe, Table 3).
struct Paper {
  const char* value = nullptr;
};

// Marks a string key that takes the empty string ("" in YAML, `--set key=` on the command line),
// with what "" means for it: Empty{"no validation"}. Other string keys refuse "", and no key takes
// a YAML null (`key:`, `~`, `null`), which would otherwise read as the default unseen.
struct Empty {
  const char* means = nullptr;
};

// What a field list says of a key besides its description.
struct FieldNotes {
  FieldNotes() = default;
  // Implicit, so that a field list writes only the notes a key has.
  FieldNotes(Paper p) : paper(p) {}
  FieldNotes(Empty e) : empty(e) {}
  FieldNotes(Paper p, Empty e) : paper(p), empty(e) {}

  Paper paper;
  Empty empty;
};

// Specialize for each enum a config holds:
//   template <> struct ConfigEnum<Norm> {
//     static const char* name(Norm n);                 // the YAML spelling
//     static Norm parse(const std::string& text);      // std::invalid_argument listing choices
//   };
template <typename Enum>
struct ConfigEnum;

// The enum's values with a name that parses back to them, counting up from 0.
template <typename Enum>
std::vector<std::string> enum_choices() {
  std::vector<std::string> names;
  for (int i = 0; i < 256; ++i) {
    const auto value = static_cast<Enum>(i);
    const std::string name = ConfigEnum<Enum>::name(value);
    try {
      if (ConfigEnum<Enum>::parse(name) != value) break;
    } catch (const std::invalid_argument&) {
      break;
    }
    names.push_back(name);
  }
  return names;
}

namespace config_fields_detail {
template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};
template <typename T>
inline constexpr bool kIsUnsigned = std::is_unsigned_v<T> && !std::is_same_v<T, bool>;
template <typename T>
inline constexpr bool kUnknownType = false;
template <typename Item, typename = void>
struct HasCheckItem : std::false_type {};
template <typename Item>
struct HasCheckItem<Item, std::void_t<decltype(check_item(std::declval<const Item&>(),
                                                          std::declval<const ConfigSection&>()))>>
    : std::true_type {};
}  // namespace config_fields_detail

// ---------------------------------------------------------------------------------------------
// Loading

// Reads one mapping's fields; absent keys keep the struct's values. Call finish() on the section
// after the list (the visitor does so for the sections and items it opens).
class FieldReader {
 public:
  explicit FieldReader(ConfigSection section) : section_(std::move(section)) {}

  template <typename T>
  void operator()(const char* key, T& value, const char* /*about*/, FieldNotes notes = {}) const {
    if constexpr (std::is_same_v<T, std::string>) {
      section_.read(key, value, notes.empty.means ? EmptyString::kAllowed : EmptyString::kRefused);
    } else if constexpr (std::is_enum_v<T>) {
      std::string text = ConfigEnum<T>::name(value);
      section_.read(key, text, EmptyString::kAllowed);
      if (text.empty()) {
        std::string choices;
        for (const auto& name : enum_choices<T>()) choices += (choices.empty() ? "" : ", ") + name;
        throw section_.error(key, "empty value; expected one of " + choices);
      }
      try {
        value = ConfigEnum<T>::parse(text);
      } catch (const std::invalid_argument& e) {
        throw section_.error(key, e.what());
      }
    } else if constexpr (config_fields_detail::kIsUnsigned<T>) {
      auto wide = static_cast<std::int64_t>(value);
      section_.read(key, wide);
      if (wide < 0) throw section_.error(key, "must be >= 0");
      if (static_cast<std::uint64_t>(wide) > std::numeric_limits<T>::max()) {
        throw section_.error(key,
                             "must be at most " + std::to_string(std::numeric_limits<T>::max()));
      }
      value = static_cast<T>(wide);
    } else {
      section_.read(key, value);
    }
  }

  template <typename Section>
  void section(const char* key, Section& value, const char* /*about*/) const {
    const FieldReader inner(section_.section(key));
    fields(inner, value);
    inner.section_.finish();
  }

  template <typename Item>
  void items(const char* key, std::vector<Item>& list, const char* /*about*/) const {
    for (const ConfigSection& item_section : section_.section_list(key)) {
      const FieldReader inner(item_section);
      Item item;
      fields(inner, item);
      item_section.finish();
      if constexpr (config_fields_detail::HasCheckItem<Item>::value) check_item(item, item_section);
      list.push_back(std::move(item));
    }
  }

 private:
  ConfigSection section_;
};

// Reads `config`'s fields from the whole document `root`; unknown keys anywhere are errors.
template <typename Config>
void read_fields(const YAML::Node& root, const std::string& source, Config& config) {
  const ConfigSection top(root, source);
  const FieldReader reader(top);
  fields(reader, config);
  top.finish();
}

// ---------------------------------------------------------------------------------------------
// Writing

// A number as YAML reads it back exactly, with a decimal point, in its shortest such form: 0.1,
// 25.0, 1.0e-9.
std::string yaml_number(double value);

// Writes fields as the entries of the YAML mapping the caller has begun. Items of a list are
// written in flow style ({source: a.en, target: a.de}) without their empty strings and lists.
class FieldWriter {
 public:
  explicit FieldWriter(YAML::Emitter& out, bool skip_empty = false)
      : out_(out), skip_empty_(skip_empty) {}

  template <typename T>
  void operator()(const char* key, const T& value, const char* /*about*/,
                  FieldNotes /*notes*/ = {}) const {
    if constexpr (std::is_same_v<T, std::string> || config_fields_detail::IsVector<T>::value) {
      if (skip_empty_ && value.empty()) return;
    }
    out_ << YAML::Key << key << YAML::Value;
    if constexpr (std::is_enum_v<T>) {
      out_ << std::string(ConfigEnum<T>::name(value));
    } else if constexpr (std::is_floating_point_v<T>) {
      out_ << yaml_number(value);  // shortest: 1.0e-5, never 1.0000000000000001e-05
    } else if constexpr (config_fields_detail::IsVector<T>::value) {
      out_ << YAML::Flow << value;
    } else {
      out_ << value;
    }
  }

  template <typename Section>
  void section(const char* key, Section& value, const char* /*about*/) const {
    out_ << YAML::Key << key << YAML::Value << YAML::BeginMap;
    const FieldWriter inner(out_);
    fields(inner, value);
    out_ << YAML::EndMap;
  }

  template <typename Item>
  void items(const char* key, std::vector<Item>& list, const char* /*about*/) const {
    out_ << YAML::Key << key << YAML::Value << YAML::BeginSeq;
    for (Item& item : list) {
      out_ << YAML::Flow << YAML::BeginMap;
      const FieldWriter inner(out_, /*skip_empty=*/true);
      fields(inner, item);
      out_ << YAML::EndMap;
    }
    out_ << YAML::EndSeq;
  }

 private:
  YAML::Emitter& out_;
  bool skip_empty_;
};

// `config`'s fields as a YAML mapping (a copy: the field lists take mutable references).
template <typename Config>
std::string write_fields(Config config) {
  YAML::Emitter out;
  out << YAML::BeginMap;
  const FieldWriter writer(out);
  fields(writer, config);
  out << YAML::EndMap;
  return out.c_str();
}

// ---------------------------------------------------------------------------------------------
// The reference

// A string as a YAML scalar: quoted only where YAML needs it ("" for the empty string).
std::string yaml_string(const std::string& value);

template <typename T>
std::string yaml_type() {
  using config_fields_detail::IsVector;
  if constexpr (std::is_same_v<T, bool>) {
    return "boolean";
  } else if constexpr (std::is_enum_v<T>) {
    std::string choices;
    for (const auto& name : enum_choices<T>()) choices += (choices.empty() ? "" : ", ") + name;
    return "enum: " + choices;
  } else if constexpr (config_fields_detail::kIsUnsigned<T>) {
    return "integer >= 0";
  } else if constexpr (std::is_integral_v<T>) {
    return "integer";
  } else if constexpr (std::is_floating_point_v<T>) {
    return "number";
  } else if constexpr (std::is_same_v<T, std::string>) {
    return "string";
  } else if constexpr (IsVector<T>::value) {
    return "list of " + yaml_type<typename T::value_type>() + "s";
  } else {
    static_assert(config_fields_detail::kUnknownType<T>, "no YAML type for this config field");
  }
}

template <typename T>
std::string yaml_value(const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value ? "true" : "false";
  } else if constexpr (std::is_enum_v<T>) {
    return ConfigEnum<T>::name(value);
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(value);
  } else if constexpr (std::is_floating_point_v<T>) {
    return yaml_number(value);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return yaml_string(value);
  } else {
    std::string list;
    for (const auto& item : value) list += (list.empty() ? "" : ", ") + yaml_value(item);
    return "[" + list + "]";
  }
}

// Documents fields from a struct whose values are the defaults, one SectionDoc per mapping. A list
// of mappings gets one section for its item type, however many keys hold such lists.
class FieldDocumenter {
 public:
  struct State {
    std::vector<SectionDoc> sections;
    std::map<std::string, std::size_t> item_sections;  // item type -> its section
  };

  FieldDocumenter(State& state, std::size_t section) : state_(state), section_(section) {}

  template <typename T>
  void operator()(const char* key, const T& value, const char* about, FieldNotes notes = {}) const {
    const char* paper = notes.paper.value ? notes.paper.value : "";
    FieldDoc doc{key, yaml_type<T>(), yaml_value(value), paper, about, std::nullopt};
    if constexpr (std::is_same_v<T, std::string>) {
      if (notes.empty.means) {
        doc.empty = notes.empty.means;
      } else {
        doc.type = "non-empty string";
      }
    } else if (notes.empty.means) {
      throw std::logic_error(std::string(key) + ": Empty{} marks string keys only");
    }
    add(std::move(doc));
  }

  template <typename Section>
  void section(const char* key, Section& value, const char* about) const {
    state_.sections.push_back({path_of(key), about, {}});
    const FieldDocumenter inner(state_, state_.sections.size() - 1);
    fields(inner, value);
  }

  template <typename Item>
  void items(const char* key, std::vector<Item>& /*list*/, const char* about) const {
    const std::string path = path_of(key) + "[]";
    add({key, "list of mappings", "[]", "", about, std::nullopt});
    const auto [known, inserted] =
        state_.item_sections.emplace(typeid(Item).name(), state_.sections.size());
    if (!inserted) {
      state_.sections[known->second].path += ", " + path;
      return;
    }
    state_.sections.push_back({path, "Each item of these lists is a mapping of these keys.", {}});
    const FieldDocumenter inner(state_, known->second);
    Item defaults;
    fields(inner, defaults);
  }

 private:
  void add(FieldDoc doc) const { state_.sections[section_].fields.push_back(std::move(doc)); }
  std::string path_of(const char* key) const {
    const std::string& parent = state_.sections[section_].path;
    return parent.empty() ? key : parent + "." + key;
  }

  State& state_;
  std::size_t section_;
};

// The sections of `defaults`' field list; the first is the top level (empty when the document
// holds only sections).
template <typename Config>
std::vector<SectionDoc> document_fields(Config defaults) {
  FieldDocumenter::State state;
  state.sections.push_back({});
  const FieldDocumenter top(state, 0);
  fields(top, defaults);
  return std::move(state.sections);
}

}  // namespace nmt
