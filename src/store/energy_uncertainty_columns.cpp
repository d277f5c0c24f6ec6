#include "store/energy_uncertainty_columns.hpp"

#include <sqlite3.h>

#include "store/results_store.hpp"
#include "store/sqlite_statement.hpp"

namespace wattwise::store {

bool has_energy_uncertainty_columns(sqlite3* db, const std::string& path) {
  return has_column(db, path, "runs", "energy_uncertainty_j") &&
         has_column(db, path, "run_phases", "energy_uncertainty_j");
}

void add_energy_uncertainty_columns(sqlite3* db, const std::string& path) {
  for (const char* table : {"runs", "run_phases"}) {
    if (has_column(db, path, table, "energy_uncertainty_j")) continue;
    const std::string sql = std::string("ALTER TABLE ") + table + " ADD COLUMN energy_uncertainty_j REAL";
    exec_sql(db, path, sql.c_str());
  }
}

void write_energy_uncertainty(sqlite3* db, const std::string& path, std::int64_t run_id,
                              const RunRecord& run) {
  Statement s(db, path, "UPDATE runs SET energy_uncertainty_j = ? WHERE id = ?");
  s.bind(1, run.energy_uncertainty_j).bind(2, run_id).run();
  for (const auto& phase : run.phases) {
    if (!phase.energy_uncertainty_j) continue;
    Statement p(db, path,
                "UPDATE run_phases SET energy_uncertainty_j = ? WHERE run_id = ? AND name = ? AND "
                "gpu_index IS ?");
    p.bind(1, phase.energy_uncertainty_j).bind(2, run_id).bind(3, phase.name).bind(4, phase.gpu_index).run();
  }
}

std::map<std::int64_t, std::optional<double>> read_run_energy_uncertainty(sqlite3* db,
                                                                          const std::string& path) {
  std::map<std::int64_t, std::optional<double>> result;
  if (!has_energy_uncertainty_columns(db, path)) return result;
  Statement runs(db, path, "SELECT id, energy_uncertainty_j FROM runs");
  while (runs.step()) result[runs.integer(0)] = runs.optional_real(1);
  return result;
}

}  // namespace wattwise::store
