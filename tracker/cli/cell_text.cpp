#include "tracker/cli/cell_text.h"

#include <fmt/format.h>

#include <cmath>

#include "tracker/view/human_format.h"
#include "tracker/view/table_format.h"

namespace nmt::tracker::cli {

std::string param_cell(const api::ParamValue& value) {
  if (const auto* text = std::get_if<std::string>(&value)) return printable(*text);
  const double number = std::get<double>(value);
  if (std::isfinite(number) && number == std::trunc(number) && std::abs(number) < 1e15) {
    return fmt::format("{}", static_cast<std::int64_t>(number));
  }
  return fmt::format("{}", number);  // shortest form that reads back exactly
}

std::string param_cell(const std::optional<api::ParamValue>& value) {
  return value ? param_cell(*value) : "-";
}

std::string figure_cell(const std::optional<double>& value, int significant) {
  return value ? format_number(*value, significant) : "-";
}

std::string text_cell(const std::optional<std::string>& value) {
  return value ? printable(*value) : "-";
}

std::string count_cell(const std::optional<std::int64_t>& value) {
  return value ? std::to_string(*value) : "-";
}

std::string time_cell(const std::optional<double>& unix_seconds) {
  return unix_seconds ? format_utc_time(*unix_seconds) : "-";
}

}  // namespace nmt::tracker::cli
