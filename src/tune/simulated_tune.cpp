#include "tune/simulated_tune.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "sim/power_model.hpp"
#include "sim/simulation.hpp"

namespace wattwise::tune {

SimulatedJob::SimulatedJob(std::string_view profile_spec, TuneKnob knob,
                           const sim::ReplayTableReader& read_table)
    : profile_(sim::make_simulation(profile_spec, {}, read_table).profile), knob_(knob) {
  if (knob == TuneKnob::kSmClock && profile_.gpu.sm_clocks_mhz.size() < 2)
    throw usage_error(fmt::format("{} has no SM clocks to tune; use --knob power-limit", profile_.gpu.name));
}

TunerConfig SimulatedJob::with_gpu_range(TunerConfig config) const {
  const sim::SimGpuSpec& gpu = profile_.gpu;
  double lowest = gpu.min_limit_w;
  double highest = gpu.max_limit_w;
  double start = gpu.default_limit_w;
  if (knob_ == TuneKnob::kSmClock) {
    // The supported clocks are descending; their mean spacing (V100: 7.5 MHz, listed as 7 and 8) is the
    // knob's resolution.
    lowest = gpu.sm_clocks_mhz.back();
    highest = gpu.sm_clocks_mhz.front();
    start = std::min<double>(gpu.boost_sm_clock_mhz, highest);
    if (config.step == TunerConfig{}.step)
      config.step = (highest - lowest) / static_cast<double>(gpu.sm_clocks_mhz.size() - 1);
  }
  const char* unit = knob_ == TuneKnob::kPowerLimit ? "W" : "MHz";
  if (config.min_value == 0) config.min_value = lowest;
  if (config.max_value == 0) config.max_value = highest;
  if (config.min_value < lowest || config.max_value > highest)
    throw usage_error(
        fmt::format("the range [{:g}, {:g}] {} is outside what {} supports, [{:g}, {:g}] {}: narrow it",
                    config.min_value, config.max_value, unit, gpu.name, lowest, highest, unit));
  // The job starts at the GPU's default, or at the range's top when the range leaves the default out.
  if (config.start_value == 0)
    config.start_value = start >= config.min_value && start <= config.max_value ? start : config.max_value;
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

IterationNoiseSource::Deviation IterationNoiseSource::next() {
  // Energy is power times time: the power's own spread is what the energy's leaves beside the time's.
  const double power_cv =
      std::sqrt(std::max(0.0, spread_.energy_cv * spread_.energy_cv - spread_.time_cv * spread_.time_cv));
  // AR(1) with the same spread as the independent noise: x' = rho x + sqrt(1 - rho^2) e.
  const double rho = std::clamp(spread_.drift.iteration_correlation, 0.0, 0.99);
  const double fresh = std::sqrt(1 - rho * rho);
  last_.time = rho * last_.time + fresh * spread_.time_cv * noise_.normal();
  last_.power = rho * last_.power + fresh * power_cv * noise_.normal();
  return last_;
}

IterationMean SimulatedJob::iterate(double value, double since_change_s, double at_s,
                                    IterationNoiseSource& noise) const {
  const IterationMean mean = mean_at(value);
  const IterationNoiseSource::Deviation deviation = noise.next();
  const double time_s = mean.time_s * std::max(0.1, 1 + deviation.time);
  double power_w = mean.energy_j / mean.time_s * std::max(0.1, 1 + deviation.power);
  // Right after a lower limit the controller needs a moment to pull the clock down (sim::SimGpuSpec).
  const double overshoot_s = std::chrono::duration<double>(profile_.gpu.overshoot_duration).count();
  if (since_change_s < overshoot_s)
    power_w *= 1 + profile_.gpu.overshoot_fraction * (1 - since_change_s / overshoot_s);
  power_w *= noise.drift().mean_factor(at_s, at_s + time_s);
  return {time_s, power_w * time_s};
}

SimulatedTuneResult simulate(std::string_view profile_spec, TunerConfig config, std::uint64_t seed,
                             std::uint64_t iterations, const IterationNoise& spread, bool dry_run,
                             const sim::ReplayTableReader& read_table) {
  const SimulatedJob job(profile_spec, config.knob, read_table);
  SimulatedTuneResult result;
  result.config = job.with_gpu_range(std::move(config));
  result.gpu_name = job.profile().gpu.name;
  result.model = job.profile().workload.model;
  Tuner tuner(result.config);
  IterationNoiseSource noise(seed, spread);
  double held = tuner.current_value();
  double since_change_s = 1e9;  // the job starts at its setting: no transient
  for (std::uint64_t i = 0; i < iterations; ++i) {
    const double value = dry_run ? result.config.start_value : tuner.current_value();
    if (value != held) since_change_s = value < held ? 0 : 1e9;
    held = value;
    const IterationMean it = job.iterate(value, since_change_s, result.time_s, noise);
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
  result.stationary_wait_iterations = tuner.stationary_wait_iterations();
  result.held_start = tuner.held_start();
  result.decisions = tuner.decisions();
  return result;
}

}  // namespace wattwise::tune
