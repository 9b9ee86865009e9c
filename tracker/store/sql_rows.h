#pragma once
// Typed reads of SQLite result columns for the store's queries (NULL as nullopt, params from
// their (value_text, value_num) pair), typed binds (nullopt as NULL), and the store's check of a
// text it requires.

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>

#include "tracker/api/wire_types.h"

namespace nmt::tracker {

namespace sql_detail {
template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};
}  // namespace sql_detail

std::optional<std::string> optional_text(const SQLite::Column& column);
std::optional<std::int64_t> optional_integer(const SQLite::Column& column);
std::optional<double> optional_number(const SQLite::Column& column);
// A param stored as text (value_text) or as a number (value_num, NULL then in value_text); a bool
// has both, "true"/"false" and 1/0, and reads as its text.
api::ParamValue param_value(const SQLite::Column& text, const SQLite::Column& number);
// The number a bool's text stands for (1 for "true", 0 for "false"); nullopt for other texts.
std::optional<double> bool_number(const std::string& text);

// A flat map (an attempt's provenance) as the JSON object text stored in one column, and back.
std::string params_json(const api::Params& params);
api::Params params_of_json(const std::string& text);

template <typename T>
void bind_optional(SQLite::Statement& statement, int index, const std::optional<T>& value) {
  if (value) {
    statement.bind(index, *value);
  } else {
    statement.bind(index);  // NULL
  }
}

// Binds `values` to the parameters from `first` on, in order; an empty optional as NULL.
template <typename... Values>
void bind_values(SQLite::Statement& statement, int first, const Values&... values) {
  int index = first;
  const auto bind_one = [&](const auto& value) {
    if constexpr (sql_detail::is_optional<std::decay_t<decltype(value)>>::value) {
      bind_optional(statement, index++, value);
    } else {
      statement.bind(index++, value);
    }
  };
  (bind_one(values), ...);
}

// Throws std::invalid_argument "<what> must not be empty" when `value` is empty.
void require_text(const std::string& value, const char* what);

// A cached statement must be reset after every use, or it keeps its read snapshot open (and
// blocks WAL checkpoints); tryReset because reset() rethrows the last step's error.
class ResetOnExit {
 public:
  explicit ResetOnExit(SQLite::Statement& statement) : statement_(statement) {}
  ~ResetOnExit() { statement_.tryReset(); }
  ResetOnExit(const ResetOnExit&) = delete;
  ResetOnExit& operator=(const ResetOnExit&) = delete;

 private:
  SQLite::Statement& statement_;
};

// Seconds since the epoch, the time every row is stamped with.
double now_seconds();

}  // namespace nmt::tracker
