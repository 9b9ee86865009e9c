#include "tracker/store/sql_rows.h"

#include "tracker/api/wire_json.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

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
  // A bool has both (its text and 1/0): the text is what was sent.
  if (!text.isNull()) return text.getString();
  if (!number.isNull()) return number.getDouble();
  return std::string();
}

std::optional<double> bool_number(const std::string& text) {
  if (text == "true") return 1.0;
  if (text == "false") return 0.0;
  return std::nullopt;
}

std::string params_json(const api::Params& params) {
  nlohmann::json object = nlohmann::json::object();
  for (const auto& [key, value] : params) object[key] = value;
  return object.dump();
}

api::Params params_of_json(const std::string& text) {
  return api::read_params(nlohmann::json::parse(text), "provenance");
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
