#pragma once

#include "measure/measurement.hpp"
#include "measure/session.hpp"
#include "sim/simulation.hpp"

namespace wattwise::measure {

// Measures a simulated job on its virtual clock: the same sampler, accountant and attribution as a real
// measurement, driven by sampling's VirtualDriver, so a simulated epoch takes milliseconds.
Measurement measure_simulated(sim::Simulation& simulation, const MeasureOptions& options);

}  // namespace wattwise::measure
