#include "sim/simulation.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/error.hpp"
#include "sim/replay.hpp"

namespace wattwise::sim {

SimGpuSystem::SimGpuSystem(const SimGpuSpec& spec, std::size_t gpus, const Clock& clock,
                           const DriftSpec& drift, std::uint64_t seed) {
  for (std::size_t i = 0; i < gpus; ++i)
    gpus_.push_back(std::make_unique<SimGpu>(static_cast<unsigned>(i), spec, clock,
                                             Drift(drift, seed * 0x9e3779b97f4a7c15ULL + i)));
}

SimGpu& SimGpuSystem::sim_gpu(std::size_t index) {
  if (index >= gpus_.size()) {
    throw usage_error(
        fmt::format("GPU {} does not exist: the simulation has {} GPU(s)", index, gpus_.size()));
  }
  return *gpus_[index];
}

std::vector<SimGpu*> SimGpuSystem::all() {
  std::vector<SimGpu*> gpus;
  for (auto& gpu : gpus_) gpus.push_back(gpu.get());
  return gpus;
}

std::unique_ptr<SimJob> Simulation::new_job(std::uint64_t run_seed) const {
  JobOptions job;
  job.batch = options.batch.value_or(profile.workload.default_batch);
  job.samples_per_epoch = options.samples_per_epoch.value_or(profile.workload.default_samples_per_epoch);
  job.epochs = options.epochs;
  job.iteration_markers_per_epoch = options.iteration_markers_per_epoch;
  job.noise_fraction = options.noise_fraction;
  job.power_noise_fraction = options.power_noise_fraction;
  if (profile.workload.replay) job.start_gap = job.epoch_gap = job.end_gap = Nanos{0};
  job.seed = run_seed;
  return std::make_unique<SimJob>(system->all(), profile.workload, job, clock->now());
}

namespace {

constexpr std::string_view kReplayPrefix = "csv:";

}  // namespace

Simulation make_simulation(std::string_view gpu_and_model, const SimulationOptions& options,
                           const ReplayTableReader& read_table) {
  const bool replay = gpu_and_model.starts_with(kReplayPrefix);
  const auto colon = gpu_and_model.find(':');
  if (colon == std::string_view::npos) {
    throw usage_error(fmt::format("--simulate wants GPU:MODEL (e.g. v100:resnet50), got '{}'; valid: {}",
                                  gpu_and_model, fmt::join(profile_names(), ", ")));
  }
  if (options.gpus == 0) throw usage_error("a simulation needs at least one GPU: pass gpus >= 1");
  Simulation sim;
  sim.options = options;
  if (replay) {
    const std::string path(gpu_and_model.substr(kReplayPrefix.size()));
    if (path.empty()) throw usage_error("--simulate csv:PATH needs a file: a runs CSV or a sweep database");
    if (!read_table)
      throw usage_error("--simulate csv:PATH is not available here: use measure, sweep or tune");
    auto curve = std::make_shared<const ReplayCurve>(replay_curve_of(read_table(path), path));
    sim.options.noise_fraction = curve->time_noise_fraction();
    sim.options.power_noise_fraction = curve->power_noise_fraction();
    sim.profile = replay_profile(std::move(curve));
  } else {
    sim.profile = find_profile(gpu_and_model.substr(0, colon), gpu_and_model.substr(colon + 1));
  }
  sim.clock = std::make_shared<VirtualClock>();
  sim.system =
      std::make_unique<SimGpuSystem>(sim.profile.gpu, options.gpus, *sim.clock, options.drift, options.seed);
  sim.job = sim.new_job(options.seed);
  return sim;
}

}  // namespace wattwise::sim
