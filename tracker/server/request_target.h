#pragma once
// Request targets as the handler wants them: "/api/sweeps/base%20sweep/table?param.model.d_k=64"
// becomes a decoded path and a decoded query map (RFC 3986 %XX escapes; '+' is a space in the
// query only, the form-encoding convention). The path is decoded whole, so a %2F inside a name
// becomes '/' and cannot be told from a separator; names in paths must not contain '/'.

#include <stdexcept>
#include <string>
#include <string_view>

#include "tracker/api/http_types.h"

namespace nmt::tracker {

namespace detail {
inline int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}
}  // namespace detail

// Decodes %XX escapes; with `plus_is_space` also '+'. Throws std::invalid_argument on a truncated
// or non-hex escape.
inline std::string percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      const int hi = i + 2 < text.size() ? detail::hex_value(text[i + 1]) : -1;
      const int lo = i + 2 < text.size() ? detail::hex_value(text[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        throw std::invalid_argument("malformed percent-encoding in request target at '" +
                                    std::string(text.substr(i, 3)) + "'");
      }
      out += static_cast<char>(hi * 16 + lo);
      i += 2;
    } else {
      out += (c == '+' && plus_is_space) ? ' ' : c;
    }
  }
  return out;
}

// Splits a request target into a decoded path and query map. A key given twice keeps its last
// value; a key without '=' maps to "". Throws std::invalid_argument on bad escapes.
inline void parse_target(std::string_view target, Request& request) {
  const auto question = target.find('?');
  request.path = percent_decode(target.substr(0, question), false);
  request.query.clear();
  if (question == std::string_view::npos) return;
  std::string_view rest = target.substr(question + 1);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    const std::string value =
        eq == std::string_view::npos ? std::string() : percent_decode(pair.substr(eq + 1), true);
    request.query[percent_decode(pair.substr(0, eq), true)] = value;
  }
}

}  // namespace nmt::tracker
