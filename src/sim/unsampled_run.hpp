#pragma once

#include <cstdint>

#include "sim/simulation.hpp"

namespace wattwise::sim {

// What one simulated run cost, straight from the model: no sampler, no alignment, no store.
struct UnsampledRun {
  double time_s = 0;
  double energy_j = 0;  // over all GPUs, exact (the model's integral, not the 100 ms counter)
};

// Runs a fresh job (noise seeded by `run_seed`) on the simulation's GPUs, with their settings as they are,
// to its end. For code that judges decisions over thousands of runs (bench/adaptive_regret) and for tests
// of the model; a sweep measures its runs through measure::measure_simulated instead.
UnsampledRun run_unsampled(Simulation& simulation, std::uint64_t run_seed);

}  // namespace wattwise::sim
