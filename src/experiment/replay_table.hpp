#pragma once

#include <string>
#include <vector>

#include "sim/replay.hpp"

namespace wattwise::experiment {

// The table behind `--simulate csv:PATH` (sim::ReplayTableReader): a runs CSV (docs/analysis-csv.md) or a
// wattwise sweep database (recognised by its SQLite header), read as the analysis reads them.
std::vector<sim::ReplayRun> read_replay_table(const std::string& path);

}  // namespace wattwise::experiment
