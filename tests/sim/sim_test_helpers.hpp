#pragma once

#include <chrono>

#include "sim/simulation.hpp"

namespace wattwise::sim::testing {

using namespace std::chrono_literals;

// A V100 running resnet50 without noise; epochs shortened so tests stay quick where they need to.
inline Simulation quiet_simulation(std::int64_t samples_per_epoch = 100000, std::size_t gpus = 1) {
  SimulationOptions options;
  options.gpus = gpus;
  options.noise_fraction = 0;
  options.samples_per_epoch = samples_per_epoch;
  return make_simulation("v100:resnet50", options);
}

// Runs the job to its end the way the event loop will; returns the markers.
inline std::vector<workload::Marker> run_to_end(Simulation& sim, SimJob& job) {
  std::vector<workload::Marker> markers;
  while (auto t = job.next_event()) {
    sim.clock->sleep_until(*t);
    auto emitted = job.advance_to(*t);
    markers.insert(markers.end(), emitted.begin(), emitted.end());
  }
  return markers;
}

}  // namespace wattwise::sim::testing
