#pragma once
// The tracker's schema as a list of migrations. PRAGMA user_version records how many have been
// applied; a database from an older build is upgraded in place, one from a newer build refused.

#include <SQLiteCpp/Database.h>

namespace nmt::tracker {

// Number of migrations this build knows, i.e. the schema version it writes.
int latest_schema_version();

// Applies the missing migrations, each with its version bump inside one transaction.
void migrate(SQLite::Database& db, const std::string& path);

}  // namespace nmt::tracker
