#include "sampling/live_energy.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace wattwise::sampling {
namespace {

// A GPU drawing `power_w` from 0 to `until_s`: its counter posted every 100 ms and read every 500 ms, its
// 20 ms samples drained up to `drained_s`.
sampling::GpuTrace constant_trace(double power_w, double until_s, double drained_s) {
  sampling::GpuTrace trace;
  for (double t = 0.05; t <= until_s + 1e-9; t += 0.5) {
    // The value read at t was posted at the last 100 ms boundary before it.
    const double posted_s = std::floor(t * 10) / 10;
    trace.energy.push_back({from_seconds(t), Nanos{std::chrono::milliseconds(4)},
                            static_cast<std::uint64_t>(std::llround(posted_s * power_w * 1000))});
  }
  for (double t = 0.02; t <= drained_s + 1e-9; t += 0.02)
    trace.power_samples.push_back({from_seconds(t), power_w});
  return trace;
}

TEST(LiveEnergy, WithoutPowerReadingsAWindowWaitsForACounterReadWellAfterItsEnd) {
  auto trace = constant_trace(300, 2.05, 2.1);
  trace.power_samples.clear();
  EXPECT_TRUE(covers(trace, from_seconds(1.8)));    // read at 2.05 >= 1.8 + 0.15
  EXPECT_FALSE(covers(trace, from_seconds(1.95)));  // 2.05 < 1.95 + 0.15
}

TEST(LiveEnergy, IdenticalIterationsOnAConstantLoadGetTheSameEnergy) {
  // The counter is read every 500 ms (its update instants unknown to a short copy); the samples say 300 W.
  const auto trace = constant_trace(300, 6.05, 6.1);
  std::vector<EnergyWindow> windows;
  for (int k = 0; k < 60; ++k)
    windows.push_back({from_seconds(1.0 + 0.08 * k), from_seconds(1.0 + 0.08 * k + 0.072)});
  const auto resolved = resolve_windows({trace}, windows);
  ASSERT_EQ(resolved.size(), windows.size());
  for (const auto& r : resolved) {
    ASSERT_TRUE(r.joules);
    EXPECT_NEAR(*r.joules, 300 * 0.072, 300 * 0.072 * 0.005);
    EXPECT_EQ(r.method, sampling::EnergyMethod::kSamples);
  }
}

TEST(LiveEnergy, AWindowIsNotAnsweredBeforeTheSamplesPastItsEndAreDrained) {
  const auto trace = constant_trace(300, 3.05, 1.5);
  EXPECT_FALSE(covers(trace, from_seconds(1.8)));
  EXPECT_TRUE(covers(trace, from_seconds(1.45)));
}

TEST(LiveEnergy, EnergyIsSummedOverTheJobsGpusForTheCoveredLeadingWindows) {
  const std::vector<sampling::GpuTrace> traces = {constant_trace(300, 3.05, 3.1),
                                                  constant_trace(100, 3.05, 3.1)};
  const std::vector<EnergyWindow> windows = {{from_seconds(1.0), from_seconds(1.2)},
                                             {from_seconds(1.5), from_seconds(2.0)},
                                             {from_seconds(3.05), from_seconds(3.2)}};  // not covered yet
  const auto resolved = resolve_windows(traces, windows);
  ASSERT_EQ(resolved.size(), 2u);
  ASSERT_TRUE(resolved[0].joules);
  EXPECT_NEAR(*resolved[0].joules, 400 * 0.2, 400 * 0.2 * 0.02);
  ASSERT_TRUE(resolved[1].joules);
  EXPECT_NEAR(*resolved[1].joules, 400 * 0.5, 400 * 0.5 * 0.02);
}

TEST(LiveEnergy, AFailedGpuAnswersAtOnceWithoutEnergyBeyondItsReadings) {
  auto lost = constant_trace(300, 1.05, 1.1);
  lost.failure = sampling::SourceFailure{from_seconds(1.1), true, "GPU is lost"};
  EXPECT_TRUE(covers(lost, from_seconds(5.0)));
  const auto resolved = resolve_windows({lost}, {{from_seconds(4.0), from_seconds(5.0)}});
  ASSERT_EQ(resolved.size(), 1u);
  EXPECT_FALSE(resolved[0].joules);
}

}  // namespace
}  // namespace wattwise::sampling
