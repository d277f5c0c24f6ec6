#pragma once

// The GPUs a command works on, built in one place for measure, sweep, tune and info: the real ones through
// NVML, or a simulated job's, seen read-only when asked.
#include <memory>
#include <optional>
#include <string>

#include "hw/gpu.hpp"
#include "safety/read_only_gpu.hpp"
#include "sim/simulation.hpp"

namespace wattwise::cli {

class CommandGpus {
 public:
  // `simulate` (GPU:MODEL or csv:PATH, `sim` its options) empty: the real GPUs, and without a driver the
  // error ends "or use --simulate GPU:MODEL". `read_only`: the GPUs are seen through
  // safety::ReadOnlyGpuSystem, and controllable() is null, so nothing can change.
  CommandGpus(const std::string& simulate, const sim::SimulationOptions& sim, bool read_only);
  CommandGpus(const CommandGpus&) = delete;
  CommandGpus& operator=(const CommandGpus&) = delete;

  // The GPUs' readings, for every command.
  hw::GpuSystem& system() { return *system_; }
  // The same GPUs with their controls, for the code that changes settings (a settings path, `info
  // --probe`); null when read-only. A read-only command can only decide at run time (it is a flag), so
  // this is where that one decision is made: below it, a path that has no ControllableGpuSystem cannot
  // name a control.
  hw::ControllableGpuSystem* controllable() { return read_only_ ? nullptr : controllable_; }
  bool simulated() const { return simulation_.has_value(); }
  sim::Simulation& simulation() { return *simulation_; }  // simulated() only

 private:
  std::optional<sim::Simulation> simulation_;
  std::unique_ptr<hw::ControllableGpuSystem> real_;
  hw::ControllableGpuSystem* controllable_ = nullptr;  // the simulation's or real_
  std::optional<safety::ReadOnlyGpuSystem> read_only_;
  hw::GpuSystem* system_ = nullptr;  // read_only_ or controllable_
};

}  // namespace wattwise::cli
