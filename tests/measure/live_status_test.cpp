#include "measure/live_status.hpp"

#include <gtest/gtest.h>

namespace wattwise::measure {
namespace {

using namespace std::chrono_literals;

sampling::GpuTrace samples_at(double watts, Nanos from, Nanos to, Nanos step) {
  sampling::GpuTrace trace;
  for (Nanos t = from; t <= to; t += step) trace.power_samples.push_back({t, watts});
  return trace;
}

TEST(LiveStatus, AWindowsEnergyIsEachGpusPowerTimesItsTimeSummed) {
  const auto a = samples_at(300, 0ms, 2s, 20ms);
  const auto b = samples_at(100, 0ms, 2s, 20ms);
  const WindowReading r = live_window({a, b}, 500ms, 1500ms);
  ASSERT_TRUE(r.energy_j && r.power_w);
  EXPECT_NEAR(*r.energy_j, 400.0 * 1.0, 1e-9);  // 1 s at 300 W + 100 W
  EXPECT_DOUBLE_EQ(*r.power_w, 400.0);
}

TEST(LiveStatus, InstantPowerServesWhereThereAreNoSamplesAndNothingAtAllIsUnknown) {
  sampling::GpuTrace instant;
  instant.power_instant = {{0ms, 200.0}, {500ms, 250.0}};
  const WindowReading r = live_window({instant}, 0ms, 1s);
  ASSERT_TRUE(r.energy_j);
  EXPECT_NEAR(*r.energy_j, 200 * 0.5 + 250 * 0.5, 1e-9);
  EXPECT_DOUBLE_EQ(*r.power_w, 250.0);
  const WindowReading none = live_window({instant, sampling::GpuTrace{}}, 0ms, 1s);
  EXPECT_FALSE(none.energy_j);  // one GPU unread: no sum that would look complete
  EXPECT_FALSE(none.power_w);
}

TEST(LiveStatus, TheLineSaysElapsedEnergyAndPowerWithUnits) {
  EXPECT_EQ(status_text({12.3, 4560.0, 312.0}), "elapsed 12.30 s | 4560.0 J so far | 312.0 W now");
  EXPECT_EQ(status_text({75.0, std::nullopt, std::nullopt}), "elapsed 75.00 s | n/a so far | n/a now");
}

}  // namespace
}  // namespace wattwise::measure
