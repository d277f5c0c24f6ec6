#include <gtest/gtest.h>

#include <chrono>

#include "../support/fake_gpu.hpp"
#include "experiment/cooldown.hpp"

namespace wattwise::experiment {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A GPU cooling down on a virtual clock: power falls from `start_w` to `idle_w` at `power_settles`; the
// temperature falls 1 C per second until `temperature_settles`, then stays.
std::unique_ptr<testing::FakeGpu> cooling_gpu(const Clock& clock, double start_w, double idle_w,
                                              Nanos power_settles, Nanos temperature_settles) {
  auto gpu = std::make_unique<testing::FakeGpu>(0, "GPU-cool", 300);
  gpu->power_w = [&clock, start_w, idle_w, power_settles]() -> std::optional<double> {
    return clock.now() < power_settles ? start_w : idle_w;
  };
  gpu->telemetry_now = [&clock, temperature_settles] {
    hw::Telemetry t;
    const Nanos now = std::min(clock.now(), temperature_settles);
    t.temp_c = 80u - static_cast<unsigned>(std::chrono::duration_cast<seconds>(now).count());
    return t;
  };
  return gpu;
}

testing::FakeGpuSystem one_gpu(std::unique_ptr<testing::FakeGpu> gpu) {
  testing::FakeGpuSystem system;
  system.add(std::move(gpu));
  return system;
}

TEST(RunnerCooldown, WaitsForIdlePowerAndFiveSecondsOfSteadyTemperature) {
  VirtualClock clock;
  testing::FakeGpuSystem system = one_gpu(cooling_gpu(clock, 250, 60, seconds(3), seconds(10)));
  const IdleBaseline idle{{60.0}};
  const auto result = cool_down(system, {0}, idle, clock, CooldownOptions{}, nullptr);
  EXPECT_TRUE(result.settled);
  // The temperature stops falling at 10 s and must then hold for the 5 s window.
  EXPECT_GE(result.waited, seconds(15));
  EXPECT_LE(result.waited, seconds(15) + milliseconds(500));
}

TEST(RunnerCooldown, GivesUpAtTheMaximumWait) {
  VirtualClock clock;
  testing::FakeGpuSystem system = one_gpu(cooling_gpu(clock, 250, 60, seconds(1000), seconds(0)));
  CooldownOptions options;
  options.max_wait = seconds(20);
  const auto result = cool_down(system, {0}, IdleBaseline{{60.0}}, clock, options, nullptr);
  EXPECT_FALSE(result.settled);
  EXPECT_EQ(result.waited, seconds(20));
}

TEST(RunnerCooldown, AStopRequestEndsTheWait) {
  VirtualClock clock;
  testing::FakeGpuSystem system = one_gpu(cooling_gpu(clock, 250, 60, seconds(1000), seconds(0)));
  const auto result = cool_down(system, {0}, IdleBaseline{{60.0}}, clock, CooldownOptions{},
                                [&] { return clock.now() >= seconds(2); });
  EXPECT_FALSE(result.settled);
  EXPECT_LT(result.waited, seconds(3));
}

}  // namespace
}  // namespace wattwise::experiment
