#include "common/config_fields.h"

#include <fmt/format.h>

#include <algorithm>

namespace nmt {

std::string yaml_number(double value) {
  // fmt's shortest form reads back to the same double; YAML 1.1 readers (PyYAML) also want a
  // point in the mantissa and a sign in the exponent.
  const std::string text = fmt::format("{}", value);
  const auto e = text.find('e');
  std::string mantissa = text.substr(0, e);
  if (mantissa.find_first_of(".ni") == std::string::npos) mantissa += ".0";  // not inf, nan
  if (e == std::string::npos) return mantissa;
  std::string exponent = text.substr(e + 1);
  const bool negative = exponent[0] == '-';
  if (exponent[0] == '-' || exponent[0] == '+') exponent.erase(0, 1);
  exponent.erase(0, std::min(exponent.find_first_not_of('0'), exponent.size() - 1));
  return mantissa + "e" + (negative ? "-" : "+") + exponent;
}

std::string yaml_string(const std::string& value) {
  YAML::Emitter out;
  out << value;
  return out.c_str();
}

}  // namespace nmt
