#pragma once

// The tuner on a simulated job, in virtual time: `tune --simulate v100:MODEL|csv:PATH` and the benchmark
// (bench/tune_regret.cpp). The job is the simulator's calibrated model (sim/profiles, sim/power_model) or a
// replayed table (sim/replay), iteration by iteration, with per-iteration noise as measured on the H100
// (docs/tune.md "Simulated tuning"), and the drift of a real GPU (sim/drift.hpp) when asked for: warm-up,
// wander and neighbouring iterations alike.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/drift.hpp"
#include "sim/noise.hpp"
#include "sim/profiles.hpp"
#include "sim/replay.hpp"
#include "tune/tuner.hpp"

namespace wattwise::tune {

// The spread of one iteration around its setting's mean. ResNet-50 at batch 128 on the H100: ~2% CV of
// energy per 72 ms iteration; its time varies by ~1%, and energy is power times time, so the power's own
// spread is sqrt(energy_cv^2 - time_cv^2).
struct IterationNoise {
  double time_cv = 0.01;
  double energy_cv = 0.02;
  // The power's warm-up and wander over the job, and how much of one iteration's deviation carries over to
  // the next (drift.iteration_correlation, AR(1): a real GPU's clocks and temperature wander over seconds,
  // so neighbouring iterations are alike). None of it by default: the model's exact means.
  sim::DriftSpec drift;
  // What a real GPU shows (sim::DriftSpec::typical()): what the benchmark and `tune --simulate` run with.
  static IterationNoise typical() { return IterationNoise{0.01, 0.02, sim::DriftSpec::typical()}; }
};

// The deviations of successive iterations from their setting's mean, seeded.
class IterationNoiseSource {
 public:
  IterationNoiseSource(std::uint64_t seed, const IterationNoise& spread)
      : noise_(seed), spread_(spread), drift_(spread.drift, seed) {}
  // The next iteration's relative deviations of time and of power (each with mean 0).
  struct Deviation {
    double time = 0;
    double power = 0;
  };
  Deviation next();
  // The job's drift (seeded with the same seed): a multiplier on its power from the job's start.
  const sim::Drift& drift() const { return drift_; }

 private:
  sim::Noise noise_;
  IterationNoise spread_;
  sim::Drift drift_;
  Deviation last_;
};

// One iteration's time and energy, noise-free.
struct IterationMean {
  double time_s = 0;
  double energy_j = 0;
};

// A simulated training job seen one iteration at a time.
class SimulatedJob {
 public:
  // "v100:resnet50" or "csv:PATH"; unknown names are usage errors listing the valid ones, and so is the SM
  // clock on a replayed table (it only knows power limits).
  SimulatedJob(std::string_view profile_spec, TuneKnob knob, const sim::ReplayTableReader& read_table = {});

  // `config` with the knob's range and start value taken from the simulated GPU where they are unset (zero):
  // the power limit's constraints and default, or the supported SM clocks (their spacing as the step, unless
  // one was given) and the boost clock. A start left out of a given range is the range's top; a range beyond
  // what the GPU supports is a usage error.
  TunerConfig with_gpu_range(TunerConfig config) const;
  IterationMean mean_at(double value) const;
  // One noisy iteration at `value`, starting `at_s` seconds into the job (the drift's clock).
  // `since_change_s`: time since the setting was lowered to `value` (the power controller overshoots the
  // new limit for a moment: the warm-up the tuner discards).
  IterationMean iterate(double value, double since_change_s, double at_s, IterationNoiseSource& noise) const;
  const sim::SimProfile& profile() const { return profile_; }

 private:
  sim::SimProfile profile_;
  TuneKnob knob_;
};

struct SimulatedTuneResult {
  TunerConfig config;  // as run: the range and start filled in from the simulated GPU
  std::string gpu_name;
  std::string model;
  std::optional<double> settled_value;
  std::optional<std::uint64_t> settled_at_iteration;  // the first kSettle
  std::uint64_t profiling_iterations = 0;
  std::uint64_t stationary_wait_iterations = 0;  // at the start value before the baseline (not profiling)
  bool held_start = false;                       // settled on the start value: nothing beat it
  std::vector<Decision> decisions;
  std::uint64_t iterations = 0;
  double energy_j = 0;  // the whole job's, every iteration at the setting held then
  double time_s = 0;
};

// Runs a job of `iterations` iterations under the tuner. Deterministic for a seed. `dry_run`: the tuner
// decides as usual but the job stays at the start value throughout (every candidate is the start: the A/A
// test).
SimulatedTuneResult simulate(std::string_view profile_spec, TunerConfig config, std::uint64_t seed,
                             std::uint64_t iterations, const IterationNoise& spread = {},
                             bool dry_run = false, const sim::ReplayTableReader& read_table = {});

}  // namespace wattwise::tune
