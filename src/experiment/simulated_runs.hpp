#pragma once

#include <cstdint>

#include "experiment/runner.hpp"
#include "measure/session.hpp"
#include "sim/simulation.hpp"

namespace wattwise::experiment {

// The runner's job for `--simulate`: each run is a fresh simulated job (its own noise, seeded by the run's
// plan index so a resumed sweep measures the same runs) on the simulation's GPUs, whose settings the runner
// has applied; a `batch` knob sets the job's batch size. `simulation` must outlive the returned function.
MeasureRunFn simulated_measure_run(sim::Simulation& simulation, measure::MeasureOptions options,
                                   std::uint64_t seed);

}  // namespace wattwise::experiment
