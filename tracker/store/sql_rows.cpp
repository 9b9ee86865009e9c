#include "tracker/store/sql_rows.h"

#include <cmath>
#include <cstdint>

namespace nmt::tracker {

using nlohmann::json;

json number_json(double value) {
  if (std::nearbyint(value) == value && std::fabs(value) < 9.0e15) {
    return static_cast<std::int64_t>(value);
  }
  return value;
}

json column_json(const SQLite::Column& column) {
  if (column.isInteger()) {
    return column.getInt64();
  }
  if (column.isFloat()) {
    return column.getDouble();
  }
  if (column.isText()) {
    return column.getString();
  }
  return nullptr;  // NULL; the schema stores no blobs
}

json row_json(SQLite::Statement& statement) {
  json row = json::object();
  for (int i = 0; i < statement.getColumnCount(); ++i) {
    row[statement.getColumnName(i)] = column_json(statement.getColumn(i));
  }
  return row;
}

json all_rows(SQLite::Statement& statement) {
  json rows = json::array();
  while (statement.executeStep()) {
    rows.push_back(row_json(statement));
  }
  return rows;
}

}  // namespace nmt::tracker
