#pragma once

// The results database's tables (docs/results-schema.md), in one room: what a new database is created with,
// what an older one gains when a writer opens it, and the indexes. kResultsSchemaVersion is in
// results_store.hpp.

#include <cstdint>
#include <string>

struct sqlite3;

namespace wattwise::store {

// PRAGMA application_id: "WATT" in ASCII, so `file` and our own checks can tell our databases apart.
inline constexpr std::int64_t kApplicationId = 0x57415454;

// Every table and index of the current version, and the application id (inside the creator's transaction).
void create_schema(sqlite3* db, const std::string& path);
// A version 1 to 6 file brought to the current version: only additions (tables, columns, meta entries), in one
// transaction.
void upgrade_schema(sqlite3* db, const std::string& path);
// The indexes (an index on every foreign key that no primary key starts with): on a file of any version,
// as a writer opens it; they change no data, so no version marks them.
void create_indexes(sqlite3* db, const std::string& path);

}  // namespace wattwise::store
