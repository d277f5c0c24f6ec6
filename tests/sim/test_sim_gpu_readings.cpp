#include <gtest/gtest.h>

#include "sim/simulation.hpp"
#include "sim_test_helpers.hpp"

namespace wattwise::sim {
namespace {

using namespace std::chrono_literals;
using testing::quiet_simulation;

// The job starts loading the GPU after its 0.5 s start gap; an epoch of 100,000 samples lasts ~266 s.
TEST(SimGpuReadings, CounterIsTheExactIntegralAtItsLastUpdate) {
  Simulation sim = quiet_simulation();
  SimGpu& gpu = sim.system->sim_gpu(0);
  const auto base = *gpu.energy_mj();
  sim.clock->sleep_until(5s);
  sim.job->advance_to(5s);
  // Read at several instants: the counter equals the model integral at the latest 100 ms update.
  for (Nanos t = 5s; t < 6s; t += 7ms) {
    sim.clock->sleep_until(t);
    const auto counter = *gpu.energy_mj();
    bool matches_an_update = false;
    for (Nanos back{0}; back < SimGpu::kCounterPeriod; back += 1ms) {
      const double model_mj = gpu.model_energy_j_at(t - back) * 1000.0;
      if (std::abs(static_cast<double>(counter - base) - model_mj) < 1.0) matches_an_update = true;
    }
    EXPECT_TRUE(matches_an_update) << "at " << to_seconds(t);
    EXPECT_LE(static_cast<double>(counter - base), gpu.model_energy_j_at(t) * 1000.0 + 1.0);
  }
}

TEST(SimGpuReadings, CounterChangesOnlyEvery100Ms) {
  Simulation sim = quiet_simulation();
  SimGpu& gpu = sim.system->sim_gpu(0);
  sim.clock->sleep_until(3s);
  sim.job->advance_to(3s);
  int changes = 0;
  auto previous = *gpu.energy_mj();
  for (Nanos t = 3s; t < 4s; t += 1ms) {
    sim.clock->sleep_until(t);
    const auto counter = *gpu.energy_mj();
    if (counter != previous) ++changes;
    previous = counter;
  }
  EXPECT_EQ(changes, 10);  // one second, busy: exactly one change per 100 ms
}

TEST(SimGpuReadings, AveragedPowerLagsAStepWhileInstantaneousFollows) {
  Simulation sim = quiet_simulation();
  SimGpu& gpu = sim.system->sim_gpu(0);
  const double idle_w = sim.profile.gpu.idle_power_w;
  const double busy_w = sim.profile.workload.busy_power_w;
  // The load starts at 0.5 s; 300 ms later the instantaneous value shows it, the 1 s average only partly.
  sim.clock->sleep_until(800ms);
  sim.job->advance_to(800ms);
  EXPECT_NEAR(*gpu.power_instant_w(), busy_w, 1e-6);
  const double average_w = *gpu.power_average_w();
  EXPECT_GT(average_w, idle_w + 10);
  EXPECT_LT(average_w, busy_w - 50);
  sim.clock->sleep_until(2s);
  sim.job->advance_to(2s);
  EXPECT_NEAR(*gpu.power_average_w(), busy_w, 1e-6);
}

TEST(SimGpuReadings, SamplesEvery20MsWithDeviceTimestamps) {
  Simulation sim = quiet_simulation();
  SimGpu& gpu = sim.system->sim_gpu(0);
  sim.clock->sleep_until(1s);
  sim.job->advance_to(1s);
  const auto samples = gpu.power_samples_since(0);
  ASSERT_GE(samples.size(), 45u);
  for (std::size_t i = 1; i < samples.size(); ++i) {
    EXPECT_EQ(samples[i].device_time_us - samples[i - 1].device_time_us, 20'000u);
  }
  EXPECT_LE(samples.back().device_time_us, 1'000'000u);
  EXPECT_GT(samples.back().device_time_us, 960'000u);
  // Only newer samples come back when asked for them.
  const auto newer = gpu.power_samples_since(samples[samples.size() - 3].device_time_us);
  EXPECT_EQ(newer.size(), 2u);
}

TEST(SimGpuReadings, SampleBufferHoldsOnly2Point4Seconds) {
  Simulation sim = quiet_simulation();
  SimGpu& gpu = sim.system->sim_gpu(0);
  sim.clock->sleep_until(10s);
  sim.job->advance_to(10s);
  const auto samples = gpu.power_samples_since(0);
  EXPECT_EQ(samples.size(), 120u);
  EXPECT_GE(samples.front().device_time_us, 7'600'000u);
}

TEST(SimGpuReadings, SamplesIntegrateToTheCounterIncrease) {
  Simulation sim = quiet_simulation(2000);  // a short epoch, so the window holds both load steps
  SimGpu& gpu = sim.system->sim_gpu(0);
  sim.clock->sleep_until(2s);
  sim.job->advance_to(2s);
  const auto samples = gpu.power_samples_since(0);
  double joules = 0;
  for (const auto& sample : samples) joules += sample.power_w * to_seconds(SimGpu::kSamplePeriod);
  const Nanos first_start = Nanos{samples.front().device_time_us * 1000} - SimGpu::kSamplePeriod;
  const Nanos last_end = Nanos{samples.back().device_time_us * 1000};
  EXPECT_NEAR(joules, gpu.model_energy_j_at(last_end) - gpu.model_energy_j_at(first_start), 1e-6);
}

TEST(SimGpuReadings, TemperatureRisesSlowlyUnderLoad) {
  Simulation sim = quiet_simulation();
  SimGpu& gpu = sim.system->sim_gpu(0);
  const unsigned idle_c = *gpu.telemetry().temp_c;
  sim.clock->sleep_until(2s);
  sim.job->advance_to(2s);
  const unsigned early_c = *gpu.telemetry().temp_c;
  sim.clock->sleep_until(120s);
  sim.job->advance_to(120s);
  const unsigned later_c = *gpu.telemetry().temp_c;
  EXPECT_LE(early_c, idle_c + 5);
  EXPECT_GT(later_c, early_c + 10);
}

TEST(SimGpuReadings, TelemetryShowsBusyAndIdle) {
  Simulation sim = quiet_simulation();
  SimGpu& gpu = sim.system->sim_gpu(0);
  EXPECT_EQ(*gpu.telemetry().util_gpu_pct, 0u);
  EXPECT_FALSE(gpu.telemetry().pcie_tx_mbps.has_value());  // not modelled: absent, not zero
  sim.clock->sleep_until(1s);
  sim.job->advance_to(1s);
  const auto busy = gpu.telemetry();
  EXPECT_EQ(*busy.util_gpu_pct, 100u);
  EXPECT_EQ(*busy.sm_clock_mhz, 1530u);
  EXPECT_EQ(*busy.pstate, 0u);
}

}  // namespace
}  // namespace wattwise::sim
