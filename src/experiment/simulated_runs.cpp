#include "experiment/simulated_runs.hpp"

#include "measure/simulated_session.hpp"

namespace wattwise::experiment {

MeasureRunFn simulated_measure_run(sim::Simulation& simulation, measure::MeasureOptions options,
                                   std::uint64_t seed) {
  return [&simulation, options = std::move(options), seed](const plan::PlannedRun& run) {
    if (auto batch = run.params.find("batch"); batch != run.params.end())
      simulation.options.batch = static_cast<unsigned>(plan::knob_number("batch", batch->second));
    // A large odd multiplier keeps the seeds of neighbouring sweeps (seed, seed+1) from sharing runs.
    simulation.job = simulation.new_job(seed * 1000003 + run.index);
    return measure::measure_simulated(simulation, options);
  };
}

}  // namespace wattwise::experiment
