#include "store/phase_rows.hpp"

#include <utility>

#include "store/energy_uncertainty_columns.hpp"
#include "store/results_store.hpp"
#include "store/sqlite_statement.hpp"

namespace wattwise::store {

void read_phase_rows(sqlite3* db, const std::string& path,
                     const std::function<void(std::int64_t run_id, PhaseResult&& phase)>& visit) {
  // A database older than version 7 has no error bars (energy_uncertainty_columns.hpp): NULL in their place.
  const std::string sql =
      std::string("SELECT run_id, gpu_index, name, count, time_s, energy_j, samples, method, ") +
      (has_energy_uncertainty_columns(db, path) ? "energy_uncertainty_j" : "NULL") +
      " FROM run_phases ORDER BY run_id, rowid";
  Statement rows(db, path, sql.c_str());
  while (rows.step()) {
    PhaseResult phase;
    if (auto gpu = rows.optional_integer(1)) phase.gpu_index = static_cast<unsigned>(*gpu);
    phase.name = rows.text(2);
    phase.count = static_cast<unsigned>(rows.integer(3));
    phase.time_s = rows.real(4);
    phase.energy_j = rows.optional_real(5);
    phase.samples = static_cast<std::size_t>(rows.integer(6));
    phase.method = rows.text(7);
    phase.energy_uncertainty_j = rows.optional_real(8);
    visit(rows.integer(0), std::move(phase));
  }
}

}  // namespace wattwise::store
