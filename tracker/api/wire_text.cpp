#include "tracker/api/wire_text.h"

#include <cmath>
#include <cstdint>

namespace nmt::tracker::api {

using nlohmann::json;

json number_json(double value) {
  if (std::nearbyint(value) == value && std::fabs(value) < 9.0e15) {
    return static_cast<std::int64_t>(value);
  }
  return value;
}

std::string wire_text(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace nmt::tracker::api
