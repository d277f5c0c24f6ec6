#include "store/node_energy_table.hpp"

#include <sqlite3.h>

#include "store/sqlite_statement.hpp"

namespace wattwise::store {

namespace {

constexpr const char* kNodeEnergyTable = R"sql(
CREATE TABLE IF NOT EXISTS run_node_energy (
  run_id INTEGER NOT NULL REFERENCES runs(id), source TEXT NOT NULL, kind TEXT NOT NULL,
  origin TEXT NOT NULL, energy_j REAL, avg_power_w REAL, PRIMARY KEY (run_id, source));
CREATE TABLE IF NOT EXISTS run_phase_node_energy (
  run_id INTEGER NOT NULL REFERENCES runs(id), name TEXT NOT NULL, gpus_j REAL, cpu_package_j REAL,
  dram_j REAL, meter_j REAL, PRIMARY KEY (run_id, name));
)sql";

}  // namespace

void create_node_energy_table(sqlite3* db, const std::string& path) {
  exec_sql(db, path, kNodeEnergyTable);
}

bool has_node_energy_table(sqlite3* db, const std::string& path) {
  Statement query(db, path, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_node_energy'");
  return query.step();
}

void insert_node_energy(sqlite3* db, const std::string& path, std::int64_t run_id,
                        const std::vector<NodeRunEnergy>& node, const std::vector<PhaseNodeEnergy>& phases) {
  for (const auto& n : node) {
    Statement s(db, path,
                "INSERT INTO run_node_energy (run_id, source, kind, origin, energy_j, avg_power_w) VALUES "
                "(?, ?, ?, ?, ?, ?)");
    s.bind(1, run_id).bind(2, n.source).bind(3, n.kind).bind(4, n.origin).bind(5, n.energy_j);
    s.bind(6, n.avg_power_w).run();
  }
  for (const auto& phase : phases) {
    Statement s(db, path,
                "INSERT INTO run_phase_node_energy (run_id, name, gpus_j, cpu_package_j, dram_j, meter_j) "
                "VALUES (?, ?, ?, ?, ?, ?)");
    s.bind(1, run_id).bind(2, phase.name).bind(3, phase.parts.gpus_j).bind(4, phase.parts.cpu_package_j);
    s.bind(5, phase.parts.dram_j).bind(6, phase.parts.meter_j).run();
  }
}

std::map<std::int64_t, std::vector<NodeRunEnergy>> read_node_energy(sqlite3* db, const std::string& path) {
  std::map<std::int64_t, std::vector<NodeRunEnergy>> node;
  if (!has_node_energy_table(db, path)) return node;
  Statement query(db, path,
                  "SELECT run_id, source, kind, origin, energy_j, avg_power_w FROM run_node_energy ORDER BY "
                  "run_id, rowid");
  while (query.step())
    node[query.integer(0)].push_back(
        {query.text(1), query.text(2), query.text(3), query.optional_real(4), query.optional_real(5)});
  return node;
}

}  // namespace wattwise::store
