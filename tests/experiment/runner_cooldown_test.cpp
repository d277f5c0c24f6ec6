#include <gtest/gtest.h>

#include <chrono>

#include "experiment/cooldown.hpp"
#include "fake_gpu.hpp"
#include "hw/gpu_without_controls.hpp"

namespace wattwise::experiment {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// A GPU cooling down on a virtual clock: power falls from `start_w` to `idle_w` at `power_settles`; the
// temperature falls 1 C per second until `temperature_settles`, then stays.
class CoolingGpu final : public hw::GpuWithoutControls {
 public:
  CoolingGpu(const Clock& clock, double start_w, double idle_w, Nanos power_settles,
             Nanos temperature_settles)
      : clock_(clock),
        start_w_(start_w),
        idle_w_(idle_w),
        power_settles_(power_settles),
        temperature_settles_(temperature_settles) {
    identity_.uuid = "GPU-cool";
  }
  const hw::GpuIdentity& identity() const override { return identity_; }
  hw::Capabilities capabilities() override { return {}; }
  std::optional<std::uint64_t> energy_mj() override { return std::nullopt; }
  std::optional<double> power_instant_w() override {
    return clock_.now() < power_settles_ ? start_w_ : idle_w_;
  }
  std::optional<double> power_average_w() override { return power_instant_w(); }
  std::vector<hw::PowerSample> power_samples_since(std::uint64_t) override { return {}; }
  hw::Telemetry telemetry() override {
    hw::Telemetry t;
    const Nanos now = std::min(clock_.now(), temperature_settles_);
    t.temp_c = 80u - static_cast<unsigned>(std::chrono::duration_cast<seconds>(now).count());
    return t;
  }

 private:
  const Clock& clock_;
  double start_w_, idle_w_;
  Nanos power_settles_, temperature_settles_;
  hw::GpuIdentity identity_;
};

class OneGpu final : public hw::GpuSystem {
 public:
  explicit OneGpu(std::unique_ptr<hw::Gpu> gpu) : gpu_(std::move(gpu)) {}
  std::string driver_version() override { return "test"; }
  std::string backend() const override { return "test"; }
  std::size_t count() const override { return 1; }
  hw::Gpu& gpu(std::size_t) override { return *gpu_; }

 private:
  std::unique_ptr<hw::Gpu> gpu_;
};

TEST(RunnerCooldown, WaitsForIdlePowerAndFiveSecondsOfSteadyTemperature) {
  VirtualClock clock;
  OneGpu system(std::make_unique<CoolingGpu>(clock, 250, 60, seconds(3), seconds(10)));
  const IdleBaseline idle{{60.0}};
  const auto result = cool_down(system, {0}, idle, clock, CooldownOptions{}, nullptr);
  EXPECT_TRUE(result.settled);
  // The temperature stops falling at 10 s and must then hold for the 5 s window.
  EXPECT_GE(result.waited, seconds(15));
  EXPECT_LE(result.waited, seconds(15) + milliseconds(500));
}

TEST(RunnerCooldown, GivesUpAtTheMaximumWait) {
  VirtualClock clock;
  OneGpu system(std::make_unique<CoolingGpu>(clock, 250, 60, seconds(1000), seconds(0)));
  CooldownOptions options;
  options.max_wait = seconds(20);
  const auto result = cool_down(system, {0}, IdleBaseline{{60.0}}, clock, options, nullptr);
  EXPECT_FALSE(result.settled);
  EXPECT_EQ(result.waited, seconds(20));
}

TEST(RunnerCooldown, AStopRequestEndsTheWait) {
  VirtualClock clock;
  OneGpu system(std::make_unique<CoolingGpu>(clock, 250, 60, seconds(1000), seconds(0)));
  const auto result = cool_down(system, {0}, IdleBaseline{{60.0}}, clock, CooldownOptions{},
                                [&] { return clock.now() >= seconds(2); });
  EXPECT_FALSE(result.settled);
  EXPECT_LT(result.waited, seconds(3));
}

}  // namespace
}  // namespace wattwise::experiment
