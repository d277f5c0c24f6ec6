#include "tune/simulated_tune.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "sim/power_model.hpp"
#include "sim/simulation.hpp"

namespace wattwise::tune {

SimulatedJob::SimulatedJob(std::string_view profile_spec, TuneKnob knob)
    : profile_(sim::make_simulation(profile_spec).profile), knob_(knob) {
  if (knob == TuneKnob::kSmClock && profile_.gpu.sm_clocks_mhz.size() < 2)
    throw usage_error(fmt::format("{} has no SM clocks to tune; use --knob power-limit", profile_.gpu.name));
}

TunerConfig SimulatedJob::with_gpu_range(TunerConfig config) const {
  if (config.min_value != 0 || config.max_value != 0) return config;
  const sim::SimGpuSpec& gpu = profile_.gpu;
  if (knob_ == TuneKnob::kPowerLimit) {
    config.min_value = gpu.min_limit_w;
    config.max_value = gpu.max_limit_w;
    config.start_value = gpu.default_limit_w;
  } else {
    // The supported clocks are descending; their mean spacing (V100: 7.5 MHz, listed as 7 and 8) is the
    // knob's resolution.
    config.min_value = gpu.sm_clocks_mhz.back();
    config.max_value = gpu.sm_clocks_mhz.front();
    config.step = (config.max_value - config.min_value) / static_cast<double>(gpu.sm_clocks_mhz.size() - 1);
    config.start_value = std::min<double>(gpu.boost_sm_clock_mhz, config.max_value);
  }
  return config;
}

IterationMean SimulatedJob::mean_at(double value) const {
  sim::GpuSettings settings;
  settings.power_limit_w = profile_.gpu.default_limit_w;
  if (knob_ == TuneKnob::kPowerLimit)
    settings.power_limit_w = value;
  else
    settings.sm_clock_max_mhz = static_cast<unsigned>(std::lround(value));
  const sim::OperatingPoint point = sim::busy_operating_point(profile_.gpu, profile_.workload, settings);
  const double time_s =
      static_cast<double>(profile_.workload.default_batch) / (profile_.workload.samples_per_s * point.speed);
  return {time_s, point.power_w * time_s};
}

IterationMean SimulatedJob::iterate(double value, double since_change_s, sim::Noise& noise,
                                    const IterationNoise& spread) const {
  const IterationMean mean = mean_at(value);
  const double power_cv =
      std::sqrt(std::max(0.0, spread.energy_cv * spread.energy_cv - spread.time_cv * spread.time_cv));
  const double time_s = mean.time_s * std::max(0.1, 1 + spread.time_cv * noise.normal());
  double power_w = mean.energy_j / mean.time_s * std::max(0.1, 1 + power_cv * noise.normal());
  // Right after a lower limit the controller needs a moment to pull the clock down (sim::SimGpuSpec).
  const double overshoot_s = std::chrono::duration<double>(profile_.gpu.overshoot_duration).count();
  if (since_change_s < overshoot_s)
    power_w *= 1 + profile_.gpu.overshoot_fraction * (1 - since_change_s / overshoot_s);
  return {time_s, power_w * time_s};
}

SimulatedTuneResult simulate(std::string_view profile_spec, TunerConfig config, std::uint64_t seed,
                             std::uint64_t iterations, const IterationNoise& spread) {
  const SimulatedJob job(profile_spec, config.knob);
  SimulatedTuneResult result;
  result.config = job.with_gpu_range(std::move(config));
  result.gpu_name = job.profile().gpu.name;
  result.model = job.profile().workload.model;
  Tuner tuner(result.config);
  sim::Noise noise(seed);
  double held = tuner.current_value();
  double since_change_s = 1e9;  // the job starts at its setting: no transient
  for (std::uint64_t i = 0; i < iterations; ++i) {
    const double value = tuner.current_value();
    if (value != held) since_change_s = value < held ? 0 : 1e9;
    held = value;
    const IterationMean it = job.iterate(value, since_change_s, noise, spread);
    since_change_s += it.time_s;
    result.energy_j += it.energy_j;
    result.time_s += it.time_s;
    const auto decision = tuner.observe({it.time_s, it.energy_j});
    if (decision && decision->kind == DecisionKind::kSettle && !result.settled_at_iteration)
      result.settled_at_iteration = decision->at_iteration;
  }
  result.iterations = iterations;
  result.settled_value = tuner.settled_value();
  result.profiling_iterations = tuner.profiling_iterations();
  result.decisions = tuner.decisions();
  return result;
}

}  // namespace wattwise::tune
