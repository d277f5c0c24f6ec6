#include "experiment/replay_table.hpp"

#include "store/analysis_runs.hpp"

namespace wattwise::experiment {

std::vector<sim::ReplayRun> read_replay_table(const std::string& path) {
  std::vector<sim::ReplayRun> runs;
  for (const auto& run : store::read_runs_file(path).runs)
    runs.push_back({run.setting, run.time_s, run.energy_j, run.ok});
  return runs;
}

}  // namespace wattwise::experiment
