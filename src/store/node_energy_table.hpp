#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

// The schema-version-3 addition for node power, kept in one place: creates run_node_energy if it is not
// there (new databases, and the upgrade of a version 1 or 2 file, which only adds).
void create_node_energy_table(sqlite3* db, const std::string& path);
void insert_node_energy(sqlite3* db, const std::string& path, std::int64_t run_id,
                        const std::vector<NodeRunEnergy>& node);
// The run's node sources; none when the database predates the table.
std::vector<NodeRunEnergy> read_node_energy(sqlite3* db, const std::string& path, std::int64_t run_id);
bool has_node_energy_table(sqlite3* db, const std::string& path);

}  // namespace wattwise::store
