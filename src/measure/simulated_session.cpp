#include "measure/simulated_session.hpp"

#include <chrono>

#include "sampling/sampler.hpp"
#include "sampling/virtual_driver.hpp"
#include "workload/phases.hpp"

namespace wattwise::measure {

namespace {
// As on the real path: sample past the job's end so the 100 ms counter catches up with it.
constexpr Nanos kTailAfterJob = std::chrono::milliseconds(250);
}  // namespace

Measurement measure_simulated(sim::Simulation& simulation, const MeasureOptions& options) {
  std::vector<hw::GpuReadings*> gpus;
  Measurement m = prepare(*simulation.system, options, gpus);
  m.command = {"simulated", simulation.profile.gpu.key + ":" + simulation.profile.workload.model};

  VirtualClock& clock = *simulation.clock;
  // A simulated GPU's power is constant between the job's events: hours of it would otherwise keep every
  // 10-20 ms reading of a flat line in memory (3.5 GB for 90 ImageNet epochs); the figures do not change.
  sampling::SamplerConfig sampler_config = options.sampler;
  sampler_config.drop_repeated_readings = true;
  // That already keeps a simulated trace small, and its figures are compared with the model to the last
  // digit: no merging of old steady samples (which may move a window cut inside a group by up to 1%).
  sampler_config.compact_samples_after.reset();
  sampling::Sampler sampler(gpus, clock, sampler_config);
  sampling::VirtualDriver driver(sampler, clock);
  auto& job = *simulation.job;

  std::optional<Nanos> job_end;
  bool tail_done = false;
  sampling::SimulatedJob hooks;
  hooks.next_event = [&]() -> std::optional<Nanos> {
    if (!job.finished()) return job.next_event();
    if (!tail_done) return *job_end + kTailAfterJob;  // one empty event keeps the sampler running a while
    return std::nullopt;
  };
  hooks.run_event = [&](Nanos now) {
    if (job.finished()) {
      tail_done = true;
      return;
    }
    for (auto& marker : job.advance_to(now)) m.markers.push_back(std::move(marker));
    if (job.finished()) job_end = now;
  };

  m.job_start = clock.now();
  const Nanos stopped = driver.run_until(Nanos::max(), hooks);
  m.job_end = job_end.value_or(stopped);
  m.outcome.exit_code = job.exit_code();

  m.traces = sampler.take_traces();
  auto phases = workload::build_phases(m.markers);
  m.phases = std::move(phases.phases);
  m.unmatched_markers = static_cast<std::size_t>(phases.unmatched_begins + phases.unmatched_ends);
  account(m);
  return m;
}

}  // namespace wattwise::measure
