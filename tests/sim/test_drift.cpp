#include <gtest/gtest.h>

#include <cmath>

#include "sim/drift.hpp"
#include "sim/unsampled_run.hpp"
#include "sim_test_helpers.hpp"

namespace wattwise::sim {
namespace {

using namespace std::chrono_literals;

TEST(Drift, NoneIsAFactorOfOneAndAnIntegralOfTime) {
  const Drift none;
  EXPECT_EQ(none.factor_at(12.5), 1.0);
  EXPECT_EQ(none.integral_s(12.5), 12.5);
  EXPECT_FALSE(Drift(DriftSpec{}, 3).any());
}

TEST(Drift, WarmsUpByItsFractionOverTheFirstMinutes) {
  DriftSpec spec = DriftSpec::typical();
  spec.wander_fraction = 0;
  const Drift d(spec, 1);
  EXPECT_NEAR(d.factor_at(1e-9), 1 - spec.warmup_fraction, 1e-6);
  EXPECT_NEAR(d.factor_at(3 * spec.warmup_tau_s), 1 - spec.warmup_fraction * std::exp(-3.0), 1e-12);
  // Energy per iteration rises 2-3% between the first seconds and two minutes in.
  const double rise = d.mean_factor(120, 121) / d.mean_factor(0, 1) - 1;
  EXPECT_GT(rise, 0.02);
  EXPECT_LT(rise, 0.03);
}

TEST(Drift, WandersByAboutItsFractionOverMinutesAndItsIntegralIsExact) {
  const Drift d(DriftSpec::typical(), 7);
  double lowest = 10, highest = 0;
  for (double t = 300; t < 3600; t += 1) {
    lowest = std::min(lowest, d.factor_at(t));
    highest = std::max(highest, d.factor_at(t));
  }
  EXPECT_GT(highest - lowest, 0.003);
  EXPECT_LE(highest - lowest, 0.0101);
  // The integral agrees with a fine midpoint sum.
  double sum = 0;
  const double dt = 0.01;
  for (double t = dt / 2; t < 200; t += dt) sum += d.factor_at(t) * dt;
  EXPECT_NEAR(d.integral_s(200), sum, 1e-6);
  // Different seeds wander differently.
  EXPECT_NE(Drift(DriftSpec::typical(), 8).factor_at(600), d.factor_at(600));
}

TEST(Drift, TheSimulatedGpusReadingsFollowItExactly) {
  SimulationOptions options;
  options.noise_fraction = 0;
  options.drift = DriftSpec::typical();
  Simulation sim = make_simulation("v100:resnet50", options);
  SimGpu& gpu = sim.system->sim_gpu(0);
  const Drift drift(DriftSpec::typical(), options.seed * 0x9e3779b97f4a7c15ULL);
  gpu.start_load(sim.profile.workload, 0ns);
  const double base_w = gpu.model_power_w_at(0ns) / drift.factor_at(0);
  sim.clock->sleep_until(100s);
  EXPECT_NEAR(gpu.model_power_w_at(100s), base_w * drift.factor_at(100), 1e-9);
  EXPECT_NEAR(gpu.model_energy_j_at(100s) - gpu.model_energy_j_at(99s),
              base_w * (drift.integral_s(100) - drift.integral_s(99)), 1e-6);
  // The counter is the same integral (it updates every 100 ms).
  const auto counter_a = gpu.energy_mj();
  sim.clock->sleep_until(101s);
  const auto counter_b = gpu.energy_mj();
  EXPECT_NEAR(static_cast<double>(*counter_b - *counter_a) / 1000,
              base_w * (drift.integral_s(100.937) - drift.integral_s(99.937)), 0.01);
}

TEST(Drift, RunsOfASweepWarmUpAndOffMeansExact) {
  // The same run at the same limit, first and then again two minutes later: with drift the later one costs
  // more energy; without it the two are equal to the last digit.
  for (const bool drifting : {false, true}) {
    SimulationOptions options;
    options.noise_fraction = 0;
    options.samples_per_epoch = 10000;
    if (drifting) options.drift = DriftSpec::typical();
    Simulation sim = make_simulation("v100:resnet50", options);
    const UnsampledRun first = run_unsampled(sim, 1);
    sim.clock->sleep_until(sim.clock->now() + 120s);
    const UnsampledRun later = run_unsampled(sim, 1);
    EXPECT_EQ(first.time_s, later.time_s);
    if (drifting)
      EXPECT_GT(later.energy_j / first.energy_j - 1, 0.01);
    else
      EXPECT_DOUBLE_EQ(later.energy_j, first.energy_j);
  }
}

}  // namespace
}  // namespace wattwise::sim
