#include "store/schema.hpp"

#include <fmt/format.h>

#include "store/cluster_node_table.hpp"
#include "store/energy_uncertainty_columns.hpp"
#include "store/node_energy_table.hpp"
#include "store/run_output_table.hpp"
#include "store/results_store.hpp"
#include "store/sqlite_statement.hpp"
#include "store/tune_table.hpp"

namespace wattwise::store {
namespace {

constexpr const char* kSchema = R"sql(
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE plan (id INTEGER PRIMARY KEY CHECK (id = 1), spec_json TEXT NOT NULL);
CREATE TABLE gpus (
  gpu_index INTEGER PRIMARY KEY, uuid TEXT NOT NULL, name TEXT NOT NULL,
  min_limit_w REAL, max_limit_w REAL, default_limit_w REAL);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY, plan_index INTEGER NOT NULL UNIQUE, settings_json TEXT NOT NULL,
  repeat INTEGER NOT NULL, warmup INTEGER NOT NULL, started_at TEXT NOT NULL, ended_at TEXT NOT NULL,
  exit_status INTEGER, time_s REAL, energy_j REAL, method TEXT NOT NULL, error TEXT NOT NULL,
  work REAL, label TEXT NOT NULL);
CREATE TABLE run_settings (
  run_id INTEGER NOT NULL REFERENCES runs(id), position INTEGER NOT NULL, knob TEXT NOT NULL,
  value TEXT NOT NULL, PRIMARY KEY (run_id, knob));
CREATE TABLE run_gpu_energy (
  run_id INTEGER NOT NULL REFERENCES runs(id), gpu_index INTEGER NOT NULL, energy_j REAL, avg_power_w REAL,
  peak_power_w REAL, method TEXT NOT NULL, enforced_power_limit_w REAL, sm_clock_mhz INTEGER,
  mem_clock_mhz INTEGER, PRIMARY KEY (run_id, gpu_index));
CREATE TABLE run_phases (
  run_id INTEGER NOT NULL REFERENCES runs(id), gpu_index INTEGER, name TEXT NOT NULL, count INTEGER NOT NULL,
  time_s REAL NOT NULL, energy_j REAL, samples INTEGER NOT NULL, method TEXT NOT NULL);
CREATE TABLE traces (
  run_id INTEGER NOT NULL REFERENCES runs(id), gpu_index INTEGER NOT NULL, csv TEXT NOT NULL,
  PRIMARY KEY (run_id, gpu_index));
)sql";

// Added in version 2 (also by the upgrade of a version 1 file on resume).
constexpr const char* kEarlierAttemptsTable = R"sql(
CREATE TABLE IF NOT EXISTS earlier_attempts (
  plan_index INTEGER NOT NULL, settings_json TEXT NOT NULL, started_at TEXT NOT NULL, ended_at TEXT NOT NULL,
  exit_status INTEGER, time_s REAL, energy_j REAL, error TEXT NOT NULL, replaced_at TEXT NOT NULL);
)sql";

// Schema version 3, GPU detection: one row per GPU of the node per run. Kept in this one block (created with
// the other tables, and added to a version 2 file on resume) so that other version 3 additions stay apart.
constexpr const char* kGpuUsageTableV3 = R"sql(
CREATE TABLE IF NOT EXISTS run_gpu_usage (
  run_id INTEGER NOT NULL REFERENCES runs(id), gpu_index INTEGER NOT NULL, uuid TEXT NOT NULL,
  expected INTEGER NOT NULL, measured INTEGER NOT NULL, job_seen INTEGER, pids_json TEXT NOT NULL,
  PRIMARY KEY (run_id, gpu_index));
)sql";

// Every other table that refers to runs(id) has a primary key starting with run_id, which SQLite indexes.
constexpr const char* kIndexes = R"sql(
CREATE INDEX IF NOT EXISTS run_phases_run_id ON run_phases (run_id);
)sql";

// The tables (and columns) every version after 1 added; each CREATE is IF NOT EXISTS and each column is
// added where missing, so it serves creation and upgrade.
void create_added_tables(sqlite3* db, const std::string& path) {
  exec_sql(db, path, kEarlierAttemptsTable);
  exec_sql(db, path, kGpuUsageTableV3);
  create_node_energy_table(db, path);
  create_tune_tables(db, path);
  create_cluster_node_table(db, path);
  add_energy_uncertainty_columns(db, path);
  create_run_output_table(db, path);
}

}  // namespace

void create_schema(sqlite3* db, const std::string& path) {
  exec_sql(db, path, fmt::format("PRAGMA application_id = {}", kApplicationId).c_str());
  exec_sql(db, path, kSchema);
  create_added_tables(db, path);
  exec_sql(db, path, kIndexes);
}

void upgrade_schema(sqlite3* db, const std::string& path) {
  Transaction transaction(db, path);
  create_added_tables(db, path);
  Statement version(db, path, "UPDATE meta SET value = ? WHERE key = 'schema_version'");
  version.bind(1, std::to_string(kResultsSchemaVersion)).run();
  transaction.commit();
}

void create_indexes(sqlite3* db, const std::string& path) {
  exec_sql(db, path, kIndexes);
}

}  // namespace wattwise::store
