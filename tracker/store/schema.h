#pragma once
// The tracker's schema as a list of migrations. PRAGMA user_version records how many have been
// applied; a database from an older build is upgraded in place, one from a newer build refused.

#include <SQLiteCpp/Database.h>

#include <string>

namespace nmt::tracker {

// Number of migrations this build knows, i.e. the schema version it writes.
int latest_schema_version();

// Applies the missing migrations, each with its version bump inside one transaction.
void migrate(SQLite::Database& db, const std::string& path);

// Applies the missing migrations up to version `target` only: how a test builds a database as an
// older build left it, to check the upgrade from there.
void migrate_to(SQLite::Database& db, const std::string& path, int target);

}  // namespace nmt::tracker
