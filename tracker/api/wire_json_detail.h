#pragma once
// The two visitors of the wire types' field lists (wire_fields.h): JsonWriter puts each field into
// a JSON object, JsonReader reads and checks each from one. Used by wire_json.cpp; not part of the
// protocol's interface.

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "common/json_fields.h"
#include "tracker/api/wire_fields.h"
#include "tracker/api/wire_json.h"
#include "tracker/api/wire_types.h"

namespace nmt::tracker::api::detail {

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};

template <class Note, class... Notes>
inline constexpr bool kHas = (std::is_same_v<Note, Notes> || ...);

// How an answer or request writes an absent std::optional field.
enum class Absent {
  kLeftOut,  // requests (and error answers): only what is there; non-finite figures left out too
  kNull,     // answers to reads: every field spelled out, null when absent
};

// Writes the fields it visits into the object `j`.
class JsonWriter {
 public:
  JsonWriter(nlohmann::json& j, Absent absent) : j_(j), absent_(absent) {}

  template <class T, class... Notes>
  void operator()(const char* key, const T& value, const Notes&... notes) {
    if constexpr (IsOptional<T>::value) {
      if (value) {
        using Value = typename T::value_type;
        if constexpr (std::is_floating_point_v<Value>) {
          if (absent_ == Absent::kLeftOut && !std::isfinite(*value)) return;
        }
        put(key, *value, notes...);
      } else if (absent_ == Absent::kNull && !kHas<LeftOut, Notes...>) {
        j_[key] = nullptr;
      }
    } else if constexpr (kHas<OmitIfEmpty, Notes...>) {
      if (!value.empty()) put(key, value, notes...);
    } else {
      put(key, value, notes...);
    }
  }

  template <class S>
  void flatten(const S& s) {
    fields(*this, const_cast<S&>(s));  // the writer only reads
  }

  template <class F>
  void on_read(F&&) {}

 private:
  template <class T, class... Notes>
  void put(const char* key, const T& value, const Notes&... notes) {
    if constexpr (std::is_enum_v<T>) {
      j_[key] = choices_of(notes...).name(value);
    } else if constexpr (std::is_same_v<T, std::map<std::string, std::optional<ParamValue>>>) {
      nlohmann::json cells = nlohmann::json::object();
      for (const auto& [column, cell] : value)
        cells[column] = cell ? nlohmann::json(*cell) : nlohmann::json();
      j_[key] = std::move(cells);
    } else {
      j_[key] = value;
    }
  }

  template <class Choices, class... Rest>
  static const Choices& choices_of(const Choices& choices, const Rest&...) {
    return choices;
  }

  nlohmann::json& j_;
  Absent absent_;
};

// Reads the fields it visits from `f`, in the order of the list, checking the notes' rules; the
// first problem throws FieldError.
class JsonReader {
 public:
  explicit JsonReader(const Fields& f) : f_(f) {}

  template <class T, class... Notes>
  void operator()(const char* key, T& value, const Notes&... notes) {
    if constexpr (IsOptional<T>::value) {
      value = optional(key, static_cast<typename T::value_type*>(nullptr));
    } else if constexpr (kHas<OrDefault, Notes...> || kHas<OmitIfEmpty, Notes...>) {
      if (auto read = optional(key, static_cast<T*>(nullptr))) value = std::move(*read);
    } else {
      value = required(key, value, notes...);
    }
    (check(key, value, notes), ...);
  }

  template <class S>
  void flatten(S& s) {
    fields(*this, s);
  }

  template <class F>
  void on_read(F&& f) {
    f();
  }

 private:
  template <class T, class... Notes>
  T required(const char* key, const T& value, const Notes&... notes) {
    if constexpr (std::is_same_v<T, std::string>) {
      return f_.text(key);
    } else if constexpr (std::is_same_v<T, bool>) {
      return f_.boolean(key);
    } else if constexpr (std::is_integral_v<T>) {
      return static_cast<T>(f_.integer(key));
    } else if constexpr (std::is_floating_point_v<T>) {
      return f_.number(key);
    } else if constexpr (std::is_enum_v<T>) {
      return parse_choice(key, notes...);
    } else if constexpr (std::is_same_v<T, Params>) {
      return read_params(f_.object(key), f_.path(key));
    } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
      return texts(key);
    } else if constexpr (std::is_same_v<T, std::map<std::string, std::optional<ParamValue>>>) {
      return cells(key);
    } else {
      return items(key, value);
    }
  }

  // The field `key` as a T, or nullopt when it is absent or null.
  template <class T>
  std::optional<T> optional(const char* key, T*) {
    if constexpr (std::is_same_v<T, std::string>) {
      return f_.optional_text(key);
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
      return f_.optional_integer(key);
    } else if constexpr (std::is_same_v<T, double>) {
      return f_.optional_number(key);
    } else if constexpr (std::is_same_v<T, bool>) {
      return f_.optional_boolean(key);
    } else {
      const nlohmann::json* object = f_.optional_object(key);
      if (!object) return std::nullopt;
      const std::string path = f_.path(key);  // outlives `fields`, which views it
      const Fields fields(*object, path);
      if constexpr (std::is_same_v<T, Params>) {
        return read_params(*object, path);
      } else if constexpr (std::is_same_v<T, std::map<std::string, double>>) {
        T numbers;
        for (const auto& item : object->items())
          numbers[item.key()] = fields.number(item.key().c_str());
        return numbers;
      } else {
        T out{};
        read(fields, out);
        return out;
      }
    }
  }

  template <class Choices, class... Rest>
  auto parse_choice(const char* key, const Choices& choices, const Rest&...) {
    const auto value = choices.find(f_.text(key));
    if (!value) bad_field(f_.path(key), "must be one of " + choices.names());
    return *value;
  }

  // The array `key` of objects, each read as a T.
  template <class T>
  std::vector<T> items(const char* key, const std::vector<T>&) {
    const nlohmann::json& array = f_.array(key);
    const std::string path = f_.path(key);
    std::vector<T> out(array.size());
    for (std::size_t i = 0; i < array.size(); ++i) {
      read(object_fields(array[i], path, static_cast<std::ptrdiff_t>(i)), out[i]);
    }
    return out;
  }

  std::vector<std::string> texts(const char* key) {
    const nlohmann::json& array = f_.array(key);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < array.size(); ++i) {
      if (!array[i].is_string())
        bad_field(fmt::format("{}[{}]", f_.path(key), i), "must be a string");
      out.push_back(array[i].get<std::string>());
    }
    return out;
  }

  // An object of column -> number, text or null.
  std::map<std::string, std::optional<ParamValue>> cells(const char* key) {
    const std::string path = f_.path(key);
    std::map<std::string, std::optional<ParamValue>> out;
    for (const auto& [column, cell] : f_.object(key).items()) {
      if (cell.is_number()) {
        out[column] = ParamValue(cell.get<double>());
      } else if (cell.is_string()) {
        out[column] = ParamValue(cell.get<std::string>());
      } else if (cell.is_null()) {
        out[column] = std::nullopt;
      } else {
        bad_field(path + "." + column, "must be a number, a string or null");
      }
    }
    return out;
  }

  template <class T, class Note>
  void check(const char* key, const T& value, const Note& note) {
    if constexpr (IsOptional<T>::value) {
      if (value) check(key, *value, note);
    } else if constexpr (std::is_same_v<Note, AtLeast>) {
      if (value < note.min)
        bad_field(f_.path(key), fmt::format("must be an integer of at least {}", note.min));
    } else if constexpr (std::is_same_v<Note, InRange>) {
      if (value < note.min || value > note.max) {
        bad_field(f_.path(key),
                  fmt::format("must be an integer from {} to {}", note.min, note.max));
      }
    } else if constexpr (std::is_same_v<Note, TextRule>) {
      if (!note.valid(value)) bad_field(f_.path(key), note.rule);
    }
  }

  const Fields& f_;
};

}  // namespace nmt::tracker::api::detail
