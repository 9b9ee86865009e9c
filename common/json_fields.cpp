#include "common/json_fields.h"

#include <limits>

namespace nmt {

using nlohmann::json;

Fields::Fields(const json& object, std::string_view parent, std::ptrdiff_t index)
    : object_(object), parent_(parent), index_(index) {}

std::string Fields::here() const {
  if (index_ >= 0) return fmt::format("{}[{}]", parent_, index_);
  return parent_.empty() ? std::string("body") : std::string(parent_);
}

std::string Fields::path(std::string_view name) const {
  if (parent_.empty() && index_ < 0) return std::string(name);
  return fmt::format("{}.{}", here(), name);
}

const json* Fields::find(const char* name, bool required) const {
  const auto it = object_.find(name);
  if (it == object_.end() || it->is_null()) {
    if (required) bad_field(path(name), "is required");
    return nullptr;
  }
  return &*it;
}

std::optional<std::string> Fields::optional_text(const char* name, bool required) const {
  const json* value = find(name, required);
  if (!value) return std::nullopt;
  if (!value->is_string()) bad_field(path(name), "must be a string");
  if (required && value->get_ref<const std::string&>().empty()) {
    bad_field(path(name), "must not be empty");
  }
  return value->get<std::string>();
}

std::string Fields::string(const char* name) const {
  const json* value = find(name, true);
  if (!value->is_string()) bad_field(path(name), "must be a string");
  return value->get<std::string>();
}

std::optional<std::int64_t> Fields::optional_integer(const char* name, bool required) const {
  const json* value = find(name, required);
  if (!value) return std::nullopt;
  if (!value->is_number_integer() ||
      (value->is_number_unsigned() &&
       value->get<std::uint64_t>() >
           static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))) {
    bad_field(path(name), "must be an integer");
  }
  return value->get<std::int64_t>();
}

std::int64_t Fields::count(const char* name) const {
  const std::int64_t value = integer(name);
  if (value < 0) bad_field(path(name), "must not be negative");
  return value;
}

std::int64_t Fields::integer_in(const char* name, std::int64_t least, std::int64_t most) const {
  const std::int64_t value = integer(name);
  if (value < least || value > most) {
    bad_field(path(name), fmt::format("must be from {} to {}", least, most));
  }
  return value;
}

std::optional<double> Fields::optional_number(const char* name, bool required) const {
  const json* value = find(name, required);
  if (!value) return std::nullopt;
  if (!value->is_number()) bad_field(path(name), "must be a number");
  return value->get<double>();
}

std::optional<bool> Fields::optional_boolean(const char* name, bool required) const {
  const json* value = find(name, required);
  if (!value) return std::nullopt;
  if (!value->is_boolean()) bad_field(path(name), "must be true or false");
  return value->get<bool>();
}

const json* Fields::optional_array(const char* name, bool required) const {
  const json* value = find(name, required);
  if (value && !value->is_array()) bad_field(path(name), "must be an array");
  return value;
}

const json* Fields::optional_object(const char* name, bool required) const {
  const json* value = find(name, required);
  if (value && !value->is_object()) bad_field(path(name), "must be an object");
  return value;
}

Fields object_fields(const json& value, std::string_view path, std::ptrdiff_t index) {
  if (!value.is_object()) {
    bad_field(index < 0 ? std::string(path) : fmt::format("{}[{}]", path, index),
              "must be an object");
  }
  return Fields(value, path, index);
}

}  // namespace nmt
