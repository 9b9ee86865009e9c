#pragma once
// Typed, checked access to the fields of one JSON object read from outside the process: the
// tracker protocol's wire types (tracker/api/wire_json.h), a preprocessed folder's manifest.json,
// a run's run.json. Every failure is a FieldError naming the field by its JSON path
// ("points[3].value", "splits.train.shards[0].pairs"), the words of the daemon's 400 answers and
// of the errors about a malformed file. A number is never converted outside its type's range: an
// integer field holding 1e40 or 2.5 is an error, not undefined behaviour.

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace nmt {

// A field that is missing, of the wrong type or out of its range.
class FieldError : public std::invalid_argument {
 public:
  FieldError(std::string field, const std::string& problem)
      : std::invalid_argument(fmt::format("field '{}' {}", field, problem)),
        field_(std::move(field)) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

[[noreturn]] inline void bad_field(const std::string& field, const std::string& problem) {
  throw FieldError(field, problem);
}

// The fields of `object`, which sits at `parent` (a path, "" at the top) or, with `index` >= 0, at
// item `index` of the array `parent`. The path is only formatted when something is wrong, since
// ingest reads thousands of points per batch; `parent` must outlive the Fields.
class Fields {
 public:
  using json = nlohmann::json;

  explicit Fields(const json& object, std::string_view parent = {}, std::ptrdiff_t index = -1);

  // Required fields: present and not null. A required text must not be empty.
  std::string text(const char* name) const { return *optional_text(name, true); }
  // A required string that may be empty.
  std::string string(const char* name) const;
  std::int64_t integer(const char* name) const { return *optional_integer(name, true); }
  // A required integer >= 0 (a count, a size, an offset).
  std::int64_t count(const char* name) const;
  // A required integer from `least` to `most`, e.g. one stored in an int.
  std::int64_t integer_in(const char* name, std::int64_t least, std::int64_t most) const;
  double number(const char* name) const { return *optional_number(name, true); }
  bool boolean(const char* name) const { return *optional_boolean(name, true); }
  const json& array(const char* name) const { return *optional_array(name, true); }
  const json& object(const char* name) const { return *optional_object(name, true); }

  // Optional fields: nullopt / nullptr when absent or null.
  std::optional<std::string> optional_text(const char* name, bool required = false) const;
  std::optional<std::int64_t> optional_integer(const char* name, bool required = false) const;
  std::optional<double> optional_number(const char* name, bool required = false) const;
  std::optional<bool> optional_boolean(const char* name, bool required = false) const;
  const json* optional_array(const char* name, bool required = false) const;
  const json* optional_object(const char* name, bool required = false) const;

  // The path of field `name` of this object, e.g. "points[3].value".
  std::string path(std::string_view name) const;
  // The path of this object itself, e.g. "points[3]" ("body" at the top).
  std::string here() const;

 private:
  // nullptr for an absent optional field; null counts as absent.
  const json* find(const char* name, bool required) const;

  const json& object_;
  std::string_view parent_;
  std::ptrdiff_t index_;
};

// `value` as an object's Fields, or a FieldError at `path` when it is not an object.
Fields object_fields(const nlohmann::json& value, std::string_view path, std::ptrdiff_t index = -1);

}  // namespace nmt
