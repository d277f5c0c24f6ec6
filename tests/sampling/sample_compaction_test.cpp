#include "sampling/sample_compaction.hpp"

#include <gtest/gtest.h>

#include "sampling/power_curve.hpp"

namespace wattwise::sampling {
namespace {

using namespace std::chrono_literals;

// 20 ms samples from t = 0 whose power is `power(k)` for the k-th.
template <typename Power>
std::vector<PowerReading> samples_20ms(std::size_t n, Power power) {
  std::vector<PowerReading> readings;
  for (std::size_t k = 0; k < n; ++k) readings.push_back({20ms * static_cast<std::int64_t>(k), power(k)});
  return readings;
}

TEST(SampleCompaction, MergesSteadyRunsKeepingTheIntegralAtEveryKeptStamp) {
  // 300 W with +-0.4% wobble: steady within the 1% tolerance.
  const auto original = samples_20ms(501, [](std::size_t k) { return 300.0 + (k % 3 == 0 ? 1.2 : -0.6); });
  std::vector<PowerReading> compacted = original;
  const std::size_t end = compact_steady_samples(compacted, 0, compacted.size());
  EXPECT_EQ(end, compacted.size());
  EXPECT_LE(compacted.size(), 12u) << "10 s of samples in groups of up to 1 s";
  const PowerCurve before(original, PowerInterpolation::kIntervalMean);
  const PowerCurve after(compacted, PowerInterpolation::kIntervalMean);
  for (const PowerReading& kept : compacted)
    EXPECT_NEAR(after.cumulative_j(kept.t), before.cumulative_j(kept.t), 1e-9 * before.cumulative_j(10s));
  // Any window, even one cut inside a merged group, is within the tolerance of its energy.
  for (Nanos t0 = 0ms; t0 < 9s; t0 += 370ms)
    EXPECT_NEAR(after.integral_j(t0, t0 + 230ms), before.integral_j(t0, t0 + 230ms),
                kSteadyTolerance * before.integral_j(t0, t0 + 230ms));
}

TEST(SampleCompaction, NoMergedSampleSpansMoreThanTheCompactedSpan) {
  std::vector<PowerReading> compacted = samples_20ms(1001, [](std::size_t) { return 70.0; });
  compact_steady_samples(compacted, 0, compacted.size());
  for (std::size_t i = 1; i < compacted.size(); ++i)
    EXPECT_LE(compacted[i].t - compacted[i - 1].t, kCompactedSpan) << i;
  EXPECT_EQ(compacted.back().t, 20s) << "the last stamp is kept";
}

TEST(SampleCompaction, LeavesAMovingPowerAlone) {
  // A training step's shape: 20 ms samples alternating between 450 W and 380 W.
  const auto original = samples_20ms(200, [](std::size_t k) { return k % 2 == 0 ? 450.0 : 380.0; });
  std::vector<PowerReading> compacted = original;
  compact_steady_samples(compacted, 0, compacted.size());
  ASSERT_EQ(compacted.size(), original.size());
  for (std::size_t i = 0; i < original.size(); ++i) EXPECT_EQ(compacted[i].power_w, original[i].power_w);
}

TEST(SampleCompaction, KeepsReadingsOutsideTheRangeAndSaysWhereTheRangeEnds) {
  // Steady in [0, 100), then a moving stretch that must stay put whatever it looks like.
  auto original = samples_20ms(150, [](std::size_t k) { return k < 100 ? 200.0 : (k % 2 ? 200.0 : 100.0); });
  std::vector<PowerReading> compacted = original;
  const std::size_t end = compact_steady_samples(compacted, 0, 100);
  ASSERT_LT(end, 100u);
  ASSERT_EQ(compacted.size(), end + 50);
  EXPECT_EQ(compacted[end - 1].t, original[99].t) << "the range's last stamp is kept";
  for (std::size_t i = 0; i < 50; ++i) EXPECT_EQ(compacted[end + i].t, original[100 + i].t);
}

}  // namespace
}  // namespace wattwise::sampling
