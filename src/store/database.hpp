#pragma once

// The results database as a file (internal to the store): the writer lock beside it, opening it, telling
// ours from a foreign file, and SQLite's files around it.

#include <filesystem>
#include <string>

struct sqlite3;

namespace wattwise::store {

// The writer lock: flock on `<db>.lock`; environment_error naming the PID of the writer that holds it.
// Returns the lock's file descriptor (closing it releases the lock).
int take_writer_lock(const std::filesystem::path& db_path);
// A database file and SQLite's files beside it.
void remove_database_files(const std::filesystem::path& path);
// A connection with extended result codes and the default busy timeout.
sqlite3* open_database(const std::filesystem::path& path, int flags);
// An existing file that must be a wattwise results database of a version this build reads: usage_error
// when missing, data_error when foreign (checked by its header before SQLite opens it) or too new.
sqlite3* open_existing(const std::filesystem::path& path, int flags);
// A writer's connection: WAL, so that readers (report, analyze, a sqlite3 shell) never block the commit of
// a run and the commit never blocks them; FULL sync, so that a committed run survives a power loss.
void make_writer(sqlite3* db, const std::string& path);
// A meta entry; "" when absent.
std::string read_meta(sqlite3* db, const std::string& path, const std::string& key);
std::string host_name();

}  // namespace wattwise::store
