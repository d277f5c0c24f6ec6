#include <gtest/gtest.h>
#include <time.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "fake_model.hpp"
#include "fake_nvml_env.hpp"

namespace wattwise::hw {
namespace {

using fake_nvml::monotonic_now_s;
using testing::FakeNvmlEnv;

// Sleeps until the monotonic clock is `phase_s` into a period of `period_s` (the fake's phases are
// anchored at monotonic time 0).
void wait_for_phase(double period_s, double phase_s) {
  const double now = monotonic_now_s();
  double wait = phase_s - std::fmod(now, period_s);
  if (wait < 0) wait += period_s;
  std::this_thread::sleep_for(std::chrono::duration<double>(wait));
}

std::uint64_t realtime_us() {
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000u + static_cast<std::uint64_t>(ts.tv_nsec) / 1000u;
}

TEST(NvmlReadings, EnergyCounterIsTheIntegralOfThePowerProfile) {
  FakeNvmlEnv env(testing::two_gpu_config());
  auto system = FakeNvmlEnv::system();
  Gpu& gpu = system->gpu(0);  // constant 300 W, limit 700 W: the counter grows 300 J per second
  wait_for_phase(0.1, 0.03);
  const auto first = gpu.energy_mj();
  const double t0 = std::floor(monotonic_now_s() * 10) / 10;
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto second = gpu.energy_mj();
  const double t1 = std::floor(monotonic_now_s() * 10) / 10;
  ASSERT_TRUE(first && second);
  const double expected_mj = 300.0 * (t1 - t0) * 1000.0;
  EXPECT_NEAR(static_cast<double>(*second - *first), expected_mj, 2.0);
  EXPECT_GT(*first, 0u);
}

TEST(NvmlReadings, EnergyCounterIsStaleBetweenItsHundredMillisecondUpdates) {
  FakeNvmlEnv env(testing::two_gpu_config());
  auto system = FakeNvmlEnv::system();
  Gpu& gpu = system->gpu(0);
  wait_for_phase(0.1, 0.02);
  const auto a = gpu.energy_mj();
  std::this_thread::sleep_for(std::chrono::milliseconds(40));
  const auto b = gpu.energy_mj();
  EXPECT_EQ(a, b) << "within one 100 ms update interval the counter does not move";
  wait_for_phase(0.1, 0.02);
  const auto c = gpu.energy_mj();
  ASSERT_TRUE(a && c);
  EXPECT_NEAR(static_cast<double>(*c - *a), 300.0 * 0.1 * 1000.0, 2.0) << "one update of 300 W x 100 ms";
}

TEST(NvmlReadings, AveragedPowerLagsAStepThatInstantaneousPowerFollows) {
  FakeNvmlEnv env(testing::two_gpu_config());
  auto system = FakeNvmlEnv::system();
  Gpu& gpu = system->gpu(1);  // 100 W for 0.5 s, then 500 W for 0.5 s
  wait_for_phase(1.0, 0.75);  // the last completed 100 ms lies inside the 500 W half
  const auto instant = gpu.power_instant_w();
  const auto average = gpu.power_average_w();
  ASSERT_TRUE(instant && average);
  EXPECT_NEAR(*instant, 500.0, 0.01);
  EXPECT_NEAR(*average, 300.0, 0.01) << "a 1 s moving average over one whole period";
}

TEST(NvmlReadings, PowerSamplesCoverTheLastSecondsEveryTwentyMillisecondsInWallClockTime) {
  FakeNvmlEnv env(testing::two_gpu_config());
  auto system = FakeNvmlEnv::system();
  Gpu& gpu = system->gpu(0);
  const std::uint64_t now_us = realtime_us();
  const std::vector<PowerSample> samples = gpu.power_samples_since(0);
  ASSERT_GE(samples.size(), 100u);
  EXPECT_LE(samples.size(), 120u);
  for (std::size_t i = 1; i < samples.size(); ++i) {
    EXPECT_EQ(samples[i].device_time_us - samples[i - 1].device_time_us, 20000u);
  }
  EXPECT_NEAR(static_cast<double>(samples.back().device_time_us), static_cast<double>(now_us), 50000.0);
  EXPECT_NEAR(static_cast<double>(samples.front().device_time_us), static_cast<double>(now_us) - 2.4e6,
              50000.0);
  for (const PowerSample& s : samples) EXPECT_NEAR(s.power_w, 300.0, 1e-6);
}

TEST(NvmlReadings, PowerSamplesAreDrainedIncrementally) {
  FakeNvmlEnv env(testing::two_gpu_config());
  auto system = FakeNvmlEnv::system();
  Gpu& gpu = system->gpu(1);
  const std::vector<PowerSample> first = gpu.power_samples_since(0);
  ASSERT_FALSE(first.empty());
  const std::uint64_t last_seen = first.back().device_time_us;
  EXPECT_TRUE(gpu.power_samples_since(last_seen).empty()) << "nothing newer yet is not an error";
  std::this_thread::sleep_for(std::chrono::milliseconds(110));
  const std::vector<PowerSample> next = gpu.power_samples_since(last_seen);
  ASSERT_GE(next.size(), 4u);
  EXPECT_LE(next.size(), 7u);
  EXPECT_EQ(next.front().device_time_us, last_seen + 20000u);
  for (const PowerSample& s : next) {
    EXPECT_TRUE(std::abs(s.power_w - 100.0) < 1e-6 || std::abs(s.power_w - 500.0) < 1e-6) << s.power_w;
  }
}

TEST(NvmlReadings, TelemetryReportsClocksUtilisationPcieAndMemoryInTheirUnits) {
  FakeNvmlEnv env(testing::two_gpu_config());
  auto system = FakeNvmlEnv::system();
  const Telemetry t = system->gpu(0).telemetry();
  EXPECT_EQ(t.sm_clock_mhz, 1980u);
  EXPECT_EQ(t.mem_clock_mhz, 2619u);
  EXPECT_EQ(t.util_gpu_pct, 43u);  // 300 W of 700 W in the fake's model
  EXPECT_EQ(t.pstate, 0u);
  EXPECT_EQ(t.throttle_reasons, 0u);
  ASSERT_TRUE(t.pcie_tx_mbps && t.pcie_rx_mbps && t.mem_used_mib);
  EXPECT_DOUBLE_EQ(*t.pcie_tx_mbps, 1.0);
  EXPECT_DOUBLE_EQ(*t.pcie_rx_mbps, 2.0);
  EXPECT_DOUBLE_EQ(*t.mem_used_mib, 1024.0);
}

TEST(NvmlReadings, PcieThroughputIsReadApartFromTheRestOfTheTelemetry) {
  // The sampler reads PCIe throughput (~21 ms of wall time a direction on an H100) only when asked.
  FakeNvmlEnv env(testing::two_gpu_config());
  auto system = FakeNvmlEnv::system();
  const Telemetry t = system->gpu(0).telemetry_without_pcie();
  EXPECT_EQ(t.sm_clock_mhz, 1980u);
  EXPECT_DOUBLE_EQ(t.mem_used_mib.value_or(0), 1024.0);
  EXPECT_FALSE(t.pcie_tx_mbps.has_value());
  EXPECT_FALSE(t.pcie_rx_mbps.has_value());
  const PcieThroughput pcie = system->gpu(0).pcie_throughput();
  EXPECT_EQ(pcie.tx_mbps, 1.0);
  EXPECT_EQ(pcie.rx_mbps, 2.0);
}

TEST(NvmlReadings, UnsupportedCallsAreAbsentNotZero) {
  nlohmann::json config = testing::two_gpu_config();
  config["gpus"][1]["unsupported"] = {"nvmlDeviceGetTemperature", "NVML_FI_DEV_POWER_INSTANT",
                                      "nvmlDeviceGetPcieThroughput"};
  FakeNvmlEnv env(config);
  auto system = FakeNvmlEnv::system();
  Gpu& gpu = system->gpu(1);
  EXPECT_FALSE(gpu.power_instant_w().has_value());
  EXPECT_FALSE(gpu.power_instant_w().has_value()) << "still absent on the second ask";
  const Telemetry t = gpu.telemetry();
  EXPECT_FALSE(t.temp_c.has_value());
  EXPECT_FALSE(t.pcie_tx_mbps.has_value());
  EXPECT_TRUE(t.sm_clock_mhz.has_value());
  const Capabilities caps = gpu.capabilities();
  EXPECT_FALSE(caps.power_instant);
  EXPECT_FALSE(caps.temperature);
  EXPECT_FALSE(caps.pcie_throughput);
  EXPECT_TRUE(caps.energy_counter);
  EXPECT_TRUE(system->gpu(0).capabilities().temperature) << "the other GPU is unaffected";
}

TEST(NvmlReadings, AnOlderDriverWithoutEnergyCounterOrSamplesDisablesJustThose) {
  FakeNvmlEnv env(testing::two_gpu_config());
  auto system = FakeNvmlEnv::system(true, FAKE_NVML_OLD_PATH);
  Gpu& gpu = system->gpu(0);
  EXPECT_FALSE(gpu.energy_mj().has_value());
  EXPECT_TRUE(gpu.power_samples_since(0).empty());
  EXPECT_TRUE(gpu.power_average_w().has_value());
  const Capabilities caps = gpu.capabilities();
  EXPECT_FALSE(caps.energy_counter);
  EXPECT_FALSE(caps.power_samples);
  EXPECT_TRUE(caps.power_instant);
  EXPECT_TRUE(caps.power_limit_read);
}

}  // namespace
}  // namespace wattwise::hw
