#pragma once
// SQLite result rows as JSON, the shape every tracker query answers in: columns keyed by the
// names the SELECT gives them, integers as integers, NULL as null.

#include <SQLiteCpp/Column.h>
#include <SQLiteCpp/Statement.h>

#include <nlohmann/json.hpp>

namespace nmt::tracker {

// Integral values as integers, so a stored 256.0 reads back as 256.
nlohmann::json number_json(double value);
nlohmann::json column_json(const SQLite::Column& column);
// The statement's current row, an object keyed by column name.
nlohmann::json row_json(SQLite::Statement& statement);
// Steps the statement to the end: an array of row objects.
nlohmann::json all_rows(SQLite::Statement& statement);

}  // namespace nmt::tracker
