#include "tracker/store/sql_rows.h"

#include <fmt/format.h>

#include <chrono>
#include <stdexcept>

namespace nmt::tracker {

std::optional<std::string> optional_text(const SQLite::Column& column) {
  if (column.isNull()) return std::nullopt;
  return column.getString();
}

std::optional<std::int64_t> optional_integer(const SQLite::Column& column) {
  if (column.isNull()) return std::nullopt;
  return column.getInt64();
}

std::optional<double> optional_number(const SQLite::Column& column) {
  if (column.isNull()) return std::nullopt;
  return column.getDouble();
}

api::ParamValue param_value(const SQLite::Column& text, const SQLite::Column& number) {
  if (!number.isNull()) return number.getDouble();
  return text.isNull() ? std::string() : text.getString();
}

void require_text(const std::string& value, const char* what) {
  if (value.empty()) {
    throw std::invalid_argument(fmt::format("{} must not be empty", what));
  }
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace nmt::tracker
