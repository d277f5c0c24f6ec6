#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>

struct sqlite3;

namespace wattwise::store {

struct RunRecord;

// The energy error bars of runs and run phases (schema version 7): a nullable column energy_uncertainty_j
// in `runs` and in `run_phases`, the +- of energy_j from the measurement's accounting (docs/measure-json.md
// "Error bars"). A database made before version 7 has no such column: its bars read as unknown (absent).

// Adds both columns where they are missing (a new database, and the upgrade of an older file).
void add_energy_uncertainty_columns(sqlite3* db, const std::string& path);
bool has_energy_uncertainty_columns(sqlite3* db, const std::string& path);

// Stores the run's bar and its phases' bars in the rows add_run just inserted for run_id.
void write_energy_uncertainty(sqlite3* db, const std::string& path, std::int64_t run_id, const RunRecord& run);

// One run's bars as stored: the run's, and each phase row's, keyed by (gpu_index or -1, name).
struct StoredUncertainty {
  std::optional<double> run_j;
  std::map<std::pair<std::int64_t, std::string>, std::optional<double>> phases_j;
};
// Every run's (runs.id -> bars); empty when the database predates the columns.
std::map<std::int64_t, StoredUncertainty> read_energy_uncertainty(sqlite3* db, const std::string& path);

}  // namespace wattwise::store
