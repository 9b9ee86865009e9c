#pragma once
// The tracker protocol's JSON helpers beside the checked field access it reads every wire type with
// (common/json_fields.h: Fields, FieldError, bad_field, object_fields).

#include <nlohmann/json.hpp>
#include <string>

#include "common/json_fields.h"

namespace nmt::tracker::api {

// Integral values as JSON integers, so a stored 256.0 reads back as 256.
nlohmann::json number_json(double value);

// JSON text as sent on the wire: compact, and a stray invalid UTF-8 byte replaced rather than
// thrown (an answer or a client's request must never fail on a name).
std::string wire_text(const nlohmann::json& value);

}  // namespace nmt::tracker::api
