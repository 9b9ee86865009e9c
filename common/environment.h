#pragma once
// The process's environment, as the functions that take a variable lookup receive it (the tracker's
// daemon address, the launcher's variables): tools pass this one, tests a map of their own.

#include <cstdlib>
#include <string>

namespace nmt {

inline const char* process_environment(const char* name) {
  return std::getenv(name);
}

// The variable's value; empty when it is not set.
inline std::string environment_text(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

}  // namespace nmt
