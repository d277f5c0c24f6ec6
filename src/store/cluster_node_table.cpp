#include "store/cluster_node_table.hpp"

#include <sqlite3.h>

#include "store/sqlite_statement.hpp"

namespace wattwise::store {

namespace {

constexpr const char* kClusterNodeTable = R"sql(
CREATE TABLE IF NOT EXISTS run_cluster_nodes (
  run_id INTEGER NOT NULL REFERENCES runs(id), node TEXT NOT NULL, wall_s REAL NOT NULL, energy_j REAL,
  complete INTEGER NOT NULL, gpus_json TEXT NOT NULL, PRIMARY KEY (run_id, node));
)sql";

bool has_cluster_node_table(sqlite3* db, const std::string& path) {
  Statement query(db, path,
                  "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_cluster_nodes'");
  return query.step();
}

}  // namespace

void create_cluster_node_table(sqlite3* db, const std::string& path) {
  exec_sql(db, path, kClusterNodeTable);
}

void insert_cluster_nodes(sqlite3* db, const std::string& path, std::int64_t run_id,
                          const std::vector<ClusterNodeEnergy>& nodes) {
  for (const auto& n : nodes) {
    Statement s(db, path,
                "INSERT INTO run_cluster_nodes (run_id, node, wall_s, energy_j, complete, gpus_json) VALUES "
                "(?, ?, ?, ?, ?, ?)");
    s.bind(1, run_id).bind(2, n.node).bind(3, n.wall_s).bind(4, n.energy_j);
    s.bind(5, std::int64_t{n.complete}).bind(6, n.gpus_json).run();
  }
}

std::map<std::int64_t, std::vector<ClusterNodeEnergy>> read_cluster_nodes(sqlite3* db,
                                                                          const std::string& path) {
  std::map<std::int64_t, std::vector<ClusterNodeEnergy>> nodes;
  if (!has_cluster_node_table(db, path)) return nodes;
  Statement query(
      db, path,
      "SELECT run_id, node, wall_s, energy_j, complete, gpus_json FROM run_cluster_nodes ORDER BY "
      "run_id, rowid");
  while (query.step())
    nodes[query.integer(0)].push_back(
        {query.text(1), query.real(2), query.optional_real(3), query.integer(4) != 0, query.text(5)});
  return nodes;
}

}  // namespace wattwise::store
