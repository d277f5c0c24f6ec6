#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "core/clock.hpp"
#include "hw/gpu.hpp"
#include "sim/drift.hpp"
#include "sim/profiles.hpp"
#include "sim/replay.hpp"
#include "sim/sim_gpu.hpp"
#include "sim/sim_job.hpp"

namespace wattwise::sim {

// N simulated GPUs of one kind on one virtual clock.
class SimGpuSystem final : public hw::ControllableGpuSystem {
 public:
  // Each GPU drifts as `drift` says (none by default), with its own wander seeded from `seed`.
  SimGpuSystem(const SimGpuSpec& spec, std::size_t gpus, const Clock& clock, const DriftSpec& drift = {},
               std::uint64_t seed = 1);

  std::string driver_version() override { return "simulated"; }
  std::string backend() const override { return "simulated"; }
  std::size_t count() const override { return gpus_.size(); }
  SimGpu& gpu(std::size_t index) override { return sim_gpu(index); }
  SimGpu& sim_gpu(std::size_t index);
  std::vector<SimGpu*> all();

 private:
  std::vector<std::unique_ptr<SimGpu>> gpus_;
};

struct SimulationOptions {
  std::size_t gpus = 1;
  std::uint64_t seed = 1;
  std::optional<unsigned> batch;                  // per GPU; default: the profile's
  std::optional<std::int64_t> samples_per_epoch;  // default: the profile's
  int epochs = 1;
  std::optional<std::int64_t> iteration_markers_per_epoch;  // nullopt: every iteration is marked
  double noise_fraction = 0.01;
  std::optional<double> power_noise_fraction;  // default: half of noise_fraction
  // The GPUs' warm-up and wander over the whole simulation (sim/drift.hpp): none by default, so tests get
  // the model's exact numbers; the benchmarks of sweeps pass DriftSpec::typical().
  DriftSpec drift;
};

// A simulated GPU system, the training job on it, and the virtual clock that both run on.
struct Simulation {
  std::shared_ptr<VirtualClock> clock;
  std::unique_ptr<SimGpuSystem> system;
  std::unique_ptr<SimJob> job;  // the first run, starting at the clock's time 0
  SimProfile profile;
  SimulationOptions options;

  // A fresh run of the same job on the same GPUs (their settings kept), starting now, with its own noise.
  // A sweep calls it once per run with a seed that differs per run.
  std::unique_ptr<SimJob> new_job(std::uint64_t run_seed) const;
};

// "v100:resnet50" -> the simulation; unknown GPU or model names are usage errors listing the valid ones.
// "csv:PATH" replays a table of measured runs or a sweep database (sim/replay.hpp): its noise is the
// table's spread between repeats (set in the returned options), and its job has no idle gaps, so a run's
// time and energy are the table's. `read_table` reads that table (experiment::read_replay_table); without
// one, "csv:PATH" is refused.
Simulation make_simulation(std::string_view gpu_and_model, const SimulationOptions& options = {},
                           const ReplayTableReader& read_table = {});

}  // namespace wattwise::sim
