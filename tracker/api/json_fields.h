#pragma once
// Typed, checked access to the fields of one JSON object, for reading the protocol's wire types
// (wire_json.h). Every failure is a FieldError naming the field by its JSON path
// ("points[3].value", "runs[0].last.step"), the words of the daemon's 400 answers and of the read
// client's errors about a malformed answer.

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace nmt::tracker::api {

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
  std::int64_t integer(const char* name) const { return *optional_integer(name, true); }
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

// Integral values as JSON integers, so a stored 256.0 reads back as 256.
nlohmann::json number_json(double value);

// JSON text as sent on the wire: compact, and a stray invalid UTF-8 byte replaced rather than
// thrown (an answer or a client's request must never fail on a name).
std::string wire_text(const nlohmann::json& value);

}  // namespace nmt::tracker::api
