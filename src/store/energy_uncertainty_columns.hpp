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

// Every run's bar as stored (runs.id -> bar); empty when the database predates the columns. The phases'
// bars come with their rows (read_phase_rows, phase_rows.hpp).
std::map<std::int64_t, std::optional<double>> read_run_energy_uncertainty(sqlite3* db,
                                                                          const std::string& path);

}  // namespace wattwise::store
