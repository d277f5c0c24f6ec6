#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/node_parts.hpp"

struct sqlite3;

namespace wattwise::store {

// One node source's energy over one run (docs/results-schema.md, table run_node_energy, schema version 3).
struct NodeRunEnergy {
  std::string source;  // "package-0", "dram-0", "meter"
  std::string kind;    // "cpu_package", "dram", "core", "uncore", "psys", "meter"
  std::string origin;  // where the figure came from, for people
  std::optional<double> energy_j;
  std::optional<double> avg_power_w;
};

// The node's energy over one phase of one run (table run_phase_node_energy, schema version 6): every
// measured GPU, idle ones included, and the node sources over the phase's time (docs/energy-scope.md).
struct PhaseNodeEnergy {
  std::string name;  // the phase
  NodeParts parts;
};

// The node-power tables, kept in one place: creates run_node_energy (schema version 3) and
// run_phase_node_energy (version 6) where they are not there (new databases, and the upgrade of an older
// file, which only adds).
void create_node_energy_table(sqlite3* db, const std::string& path);
void insert_node_energy(sqlite3* db, const std::string& path, std::int64_t run_id,
                        const std::vector<NodeRunEnergy>& node, const std::vector<PhaseNodeEnergy>& phases);
// Every run's node sources by run id, in the order stored; none when the database predates the table.
std::map<std::int64_t, std::vector<NodeRunEnergy>> read_node_energy(sqlite3* db, const std::string& path);
bool has_node_energy_table(sqlite3* db, const std::string& path);

}  // namespace wattwise::store
