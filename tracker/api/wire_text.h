#pragma once
// JSON as the tracker protocol writes it: numbers and the text on the wire. Its wire types are read
// with common/json_fields.h.

#include <nlohmann/json.hpp>
#include <string>

namespace nmt::tracker::api {

// Integral values as JSON integers, so a stored 256.0 reads back as 256.
nlohmann::json number_json(double value);

// JSON text as sent on the wire: compact, and a stray invalid UTF-8 byte replaced rather than
// thrown (an answer or a client's request must never fail on a name).
std::string wire_text(const nlohmann::json& value);

}  // namespace nmt::tracker::api
