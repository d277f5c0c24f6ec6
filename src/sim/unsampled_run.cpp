#include "sim/unsampled_run.hpp"

namespace wattwise::sim {

UnsampledRun run_unsampled(Simulation& simulation, std::uint64_t run_seed) {
  simulation.job = simulation.new_job(run_seed);
  SimJob& job = *simulation.job;
  const Nanos start = simulation.clock->now();
  // Read now: the model keeps only its recent past (SimGpu::model_energy_j_at).
  double start_j = 0;
  for (SimGpu* gpu : simulation.system->all()) start_j += gpu->model_energy_j_at(start);
  while (auto t = job.next_event()) {
    simulation.clock->sleep_until(*t);
    job.advance_to(*t);
  }
  const Nanos end = simulation.clock->now();
  double end_j = 0;
  for (SimGpu* gpu : simulation.system->all()) end_j += gpu->model_energy_j_at(end);
  return UnsampledRun{to_seconds(end - start), end_j - start_j};
}

}  // namespace wattwise::sim
