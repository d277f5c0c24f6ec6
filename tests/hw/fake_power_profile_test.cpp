#include <gtest/gtest.h>

#include "fake_config.hpp"
#include "fake_model.hpp"

namespace wattwise::fake_nvml {
namespace {

TEST(FakePowerProfile, IntegratesAcrossPeriodsAndUnderACap) {
  const PowerProfile profile({{0.5, 100.0}, {0.5, 500.0}});
  EXPECT_DOUBLE_EQ(profile.energy_j(0.0, 1.0, 1000.0), 300.0);
  EXPECT_DOUBLE_EQ(profile.energy_j(10.25, 10.75, 1000.0), 0.25 * 100 + 0.25 * 500);
  EXPECT_DOUBLE_EQ(profile.energy_j(0.0, 2.0, 200.0), 2 * (0.5 * 100 + 0.5 * 200));
  EXPECT_DOUBLE_EQ(profile.power_w(3.7), 500.0);
}

TEST(FakePowerProfile, CounterIsContinuousAcrossALimitChange) {
  FakeGpuConfig gpu;
  gpu.profile = PowerProfile({{1.0, 300.0}});
  FakeGpuSettings settings;
  settings.power_limit_mw = 700000;
  settings.anchor_energy_j = 50.0;
  settings.anchor_time_s = 10.0;
  const FakeGpuModel model(gpu, settings);
  EXPECT_DOUBLE_EQ(model.energy_j(9.0), 50.0);
  EXPECT_DOUBLE_EQ(model.energy_j(12.0), 50.0 + 600.0);
  EXPECT_EQ(model.counter_mj(12.05), 650000u);
}

}  // namespace
}  // namespace wattwise::fake_nvml
