#pragma once
// Typed reads of SQLite result columns for the store's queries: NULL as nullopt, params from
// their (value_text, value_num) pair.

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>

#include <cstdint>
#include <optional>
#include <string>

#include "tracker/api/wire_types.h"

namespace nmt::tracker {

std::optional<std::string> optional_text(const SQLite::Column& column);
std::optional<std::int64_t> optional_integer(const SQLite::Column& column);
std::optional<double> optional_number(const SQLite::Column& column);
// A param stored as text (value_text) or as a number (value_num, NULL then in value_text).
api::ParamValue param_value(const SQLite::Column& text, const SQLite::Column& number);

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
