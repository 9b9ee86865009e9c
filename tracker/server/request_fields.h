#pragma once
// Request-body checking for the handler: typed access to one JSON object's fields, and the
// HttpError that carries the status and the field at fault into the error answer
// (`{"error", "field"}`, tracker/API.md). The handler's own; nothing here knows of sockets.

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

// Its own namespace: the client library has an HttpError of its own, and tests link both.
namespace nmt::tracker::handler {

// A failure with its HTTP status, and the field or query parameter at fault when there is one.
class HttpError : public std::runtime_error {
 public:
  HttpError(int status, const std::string& message, std::string field = {})
      : std::runtime_error(message), status_(status), field_(std::move(field)) {}
  int status() const { return status_; }
  const std::string& field() const { return field_; }

 private:
  int status_;
  std::string field_;
};

[[noreturn]] inline void bad_field(const std::string& field, const std::string& problem) {
  throw HttpError(400, fmt::format("field '{}' {}", field, problem), field);
}

// Typed access to one JSON object's fields. The field path ("points[3].value") is only formatted
// when something is wrong, since ingest reads thousands of points per batch.
class Fields {
 public:
  using json = nlohmann::json;

  explicit Fields(const json& object, std::string_view parent = {}, std::ptrdiff_t index = -1)
      : object_(object), parent_(parent), index_(index) {}

  std::string text(const char* name) const { return *optional_text(name, true); }
  std::optional<std::string> optional_text(const char* name, bool required = false) const {
    const json* value = find(name, required);
    if (value && !value->is_string()) {
      bad_field(path(name), "must be a string");
    }
    if (value && required && value->get_ref<const std::string&>().empty()) {
      bad_field(path(name), "must not be empty");
    }
    return value ? std::optional(value->get<std::string>()) : std::nullopt;
  }
  std::int64_t integer(const char* name) const { return *optional_integer(name, true); }
  std::optional<std::int64_t> optional_integer(const char* name, bool required = false) const {
    const json* value = find(name, required);
    if (!value) {
      return std::nullopt;
    }
    if (!value->is_number_integer() ||
        (value->is_number_unsigned() &&
         value->get<std::uint64_t>() >
             static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))) {
      bad_field(path(name), "must be an integer");
    }
    return value->get<std::int64_t>();
  }
  double number(const char* name) const { return *optional_number(name, true); }
  std::optional<double> optional_number(const char* name, bool required = false) const {
    const json* value = find(name, required);
    if (value && !value->is_number()) {
      bad_field(path(name), "must be a number");
    }
    return value ? std::optional(value->get<double>()) : std::nullopt;
  }
  const json& array(const char* name) const {
    const json* value = find(name, true);
    if (!value->is_array()) {
      bad_field(path(name), "must be an array");
    }
    return *value;
  }
  std::string path(const char* name) const {
    if (parent_.empty()) {
      return name;
    }
    return index_ < 0 ? fmt::format("{}.{}", parent_, name)
                      : fmt::format("{}[{}].{}", parent_, index_, name);
  }

 private:
  // nullptr for an absent optional field; null counts as absent.
  const json* find(const char* name, bool required) const {
    const auto it = object_.find(name);
    if (it == object_.end() || it->is_null()) {
      if (required) {
        bad_field(path(name), "is required");
      }
      return nullptr;
    }
    return &*it;
  }

  const json& object_;
  std::string_view parent_;
  std::ptrdiff_t index_;
};

}  // namespace nmt::tracker::handler
