#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

struct sqlite3;

namespace wattwise::store {

// One node's share of a multi-node run (`sweep --slurm`; docs/results-schema.md, table run_cluster_nodes,
// schema version 5): the node's job GPUs' energy as its agent measured it. The run's own energy_j is the
// sum over its nodes. GPU indices repeat across nodes, so the node's GPUs are kept here by UUID, as JSON.
struct ClusterNodeEnergy {
  std::string node;  // SLURMD_NODENAME
  double wall_s = 0;
  std::optional<double> energy_j;  // absent: a GPU of the node had no figure
  bool complete = false;           // the node's agent measured to the end
  std::string gpus_json;           // [{"uuid", "index", "name", "energy_j", "enforced_power_limit_w"}]
};

// Creates run_cluster_nodes if it is not there (new databases, and the upgrade of older files).
void create_cluster_node_table(sqlite3* db, const std::string& path);
void insert_cluster_nodes(sqlite3* db, const std::string& path, std::int64_t run_id,
                          const std::vector<ClusterNodeEnergy>& nodes);
// Every multi-node run's nodes by run id, in the order stored; none for single-node runs or a file older
// than version 5.
std::map<std::int64_t, std::vector<ClusterNodeEnergy>> read_cluster_nodes(sqlite3* db,
                                                                          const std::string& path);

}  // namespace wattwise::store
