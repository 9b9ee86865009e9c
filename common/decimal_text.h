#pragma once
// A number written in a file name (a checkpoint's step, a writer's pid): decimal digits only, no
// sign, no spaces.

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>

namespace nmt {

// The number that `text` is entirely, in decimal digits; nullopt for anything else, an empty text
// or a number past int64.
inline std::optional<std::int64_t> parse_decimal(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    return std::nullopt;
  }
  errno = 0;
  const long long value = std::strtoll(text.c_str(), nullptr, 10);
  if (errno == ERANGE) return std::nullopt;
  return static_cast<std::int64_t>(value);
}

}  // namespace nmt
