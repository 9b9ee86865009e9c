#pragma once
// Helpers shared by the wire_json_*.cpp files; not part of the protocol's interface.

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>

namespace nmt::tracker::api::detail {

// Sets j[key] when `value` is there (and finite, for a floating-point value).
template <class T>
void put(nlohmann::json& j, const char* key, const std::optional<T>& value) {
  if constexpr (std::is_floating_point_v<T>) {
    if (value && std::isfinite(*value)) j[key] = *value;
  } else {
    if (value) j[key] = *value;
  }
}

// Sets j[key] to `value`, or to null when it is absent: answers spell out every field.
template <class T>
void put_or_null(nlohmann::json& j, const char* key, const std::optional<T>& value) {
  if (value) {
    j[key] = *value;
  } else {
    j[key] = nullptr;
  }
}

}  // namespace nmt::tracker::api::detail
