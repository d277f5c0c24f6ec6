#include "cli/command_gpus.hpp"

#include "cli/gpu_system.hpp"
#include "experiment/replay_table.hpp"

namespace wattwise::cli {

CommandGpus::CommandGpus(const std::string& simulate, const sim::SimulationOptions& sim, bool read_only) {
  if (simulate.empty()) {
    real_ = open_real_gpus(OfferSimulate::kYes);
    controllable_ = real_.get();
  } else {
    simulation_.emplace(sim::make_simulation(simulate, sim, experiment::read_replay_table));
    controllable_ = simulation_->system.get();
  }
  system_ = controllable_;
  if (read_only) system_ = &read_only_.emplace(*controllable_);
}

}  // namespace wattwise::cli
