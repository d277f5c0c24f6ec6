#include "sampling/sample_compaction.hpp"

#include <gtest/gtest.h>

#include <algorithm>

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
  const std::size_t end = compact_samples(compacted, 0, compacted.size(), CompactionRule{});
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
  compact_samples(compacted, 0, compacted.size(), CompactionRule{});
  for (std::size_t i = 1; i < compacted.size(); ++i)
    EXPECT_LE(compacted[i].t - compacted[i - 1].t, kCompactedSpan) << i;
  EXPECT_EQ(compacted.back().t, 20s) << "the last stamp is kept";
}

TEST(SampleCompaction, LeavesAMovingPowerAlone) {
  // A training step's shape: 20 ms samples alternating between 450 W and 380 W.
  const auto original = samples_20ms(200, [](std::size_t k) { return k % 2 == 0 ? 450.0 : 380.0; });
  std::vector<PowerReading> compacted = original;
  compact_samples(compacted, 0, compacted.size(), CompactionRule{});
  ASSERT_EQ(compacted.size(), original.size());
  for (std::size_t i = 0; i < original.size(); ++i) EXPECT_EQ(compacted[i].power_w, original[i].power_w);
}

TEST(SampleCompaction, KeepsReadingsOutsideTheRangeAndSaysWhereTheRangeEnds) {
  // Steady in [0, 100), then a moving stretch that must stay put whatever it looks like.
  auto original = samples_20ms(150, [](std::size_t k) { return k < 100 ? 200.0 : (k % 2 ? 200.0 : 100.0); });
  std::vector<PowerReading> compacted = original;
  const std::size_t end = compact_samples(compacted, 0, 100, CompactionRule{});
  ASSERT_LT(end, 100u);
  ASSERT_EQ(compacted.size(), end + 50);
  EXPECT_EQ(compacted[end - 1].t, original[99].t) << "the range's last stamp is kept";
  for (std::size_t i = 0; i < 50; ++i) EXPECT_EQ(compacted[end + i].t, original[100 + i].t);
}

TEST(SampleCompaction, WithWindowEdgesAMovingPowerMergesAwayFromThemAndStaysAsItCameNearThem) {
  // The training step's shape again, 20 s of it, with phase edges at 5 s and 12.31 s (a measurement's
  // markers): away from them it merges into groups of up to 1 s, near them every sample stays.
  const auto original = samples_20ms(1001, [](std::size_t k) { return k % 2 == 0 ? 450.0 : 380.0; });
  std::vector<PowerReading> compacted = original;
  CompactionRule rule;
  rule.steady_only = false;
  rule.window_edges = {5s, 12310ms};
  compact_samples(compacted, 0, compacted.size(), rule);
  EXPECT_LT(compacted.size(), 100u) << "20 s in ~1 s groups, plus the samples near two edges";
  for (std::size_t i = 1; i < compacted.size(); ++i)
    EXPECT_LE(compacted[i].t - compacted[i - 1].t, kCompactedSpan) << i;
  std::size_t near_edges = 0;
  for (const PowerReading& r : original) {
    const bool near = std::chrono::abs(r.t - 5s) <= kProtectedSpan ||
                      std::chrono::abs(r.t - 12310ms) <= kProtectedSpan;
    if (!near) continue;
    ++near_edges;
    const auto it = std::find_if(compacted.begin(), compacted.end(), [&](const auto& c) { return c.t == r.t; });
    ASSERT_NE(it, compacted.end()) << "sample at " << r.t.count() << " ns near an edge was merged";
    EXPECT_EQ(it->power_w, r.power_w);
  }
  EXPECT_GE(near_edges, 2u * 25u) << "2 x 0.5 s of 20 ms samples";
  // A window cut at the edges reads what it read before: the cumulative energy is exact at each kept
  // stamp, and the stretch around each edge is the original one.
  const PowerCurve before(original, PowerInterpolation::kIntervalMean);
  const PowerCurve after(compacted, PowerInterpolation::kIntervalMean);
  for (Nanos edge : {Nanos{5s}, Nanos{12310ms}, Nanos{5010ms}, Nanos{12300ms}})
    EXPECT_NEAR(after.cumulative_j(edge), before.cumulative_j(edge), 1e-9 * before.cumulative_j(20s));
  EXPECT_NEAR(after.integral_j(5s, 12310ms), before.integral_j(5s, 12310ms), 1e-9 * before.cumulative_j(20s));
}

TEST(SampleCompaction, PointReadingsAreThinnedToOneASecondAwayFromWindowEdgesAndKeptNearThem) {
  // Instantaneous power read every 20 ms for 20 s, changing every 100 ms; an edge at 7.5 s.
  const auto original = samples_20ms(1001, [](std::size_t k) { return 300.0 + static_cast<double>(k / 5 % 7); });
  std::vector<PowerReading> thinned = original;
  CompactionRule rule;
  rule.steady_only = false;
  rule.window_edges = {7500ms};
  const std::size_t end = thin_point_readings(thinned, 0, thinned.size(), rule);
  EXPECT_EQ(end, thinned.size());
  EXPECT_LT(thinned.size(), 20u + 26u + 2u) << "one a second, and every reading within 0.25 s of the edge";
  EXPECT_EQ(thinned.front().t, original.front().t);
  EXPECT_EQ(thinned.back().t, original.back().t);
  for (std::size_t i = 1; i < thinned.size(); ++i)
    EXPECT_LE(thinned[i].t - thinned[i - 1].t, kCompactedSpan) << i;
  for (const PowerReading& r : original) {
    if (std::chrono::abs(r.t - 7500ms) > kProtectedSpan) continue;
    EXPECT_TRUE(std::any_of(thinned.begin(), thinned.end(), [&](const auto& t) { return t.t == r.t; }))
        << r.t.count();
  }
  // Without edges known nothing is thinned.
  std::vector<PowerReading> untouched = original;
  thin_point_readings(untouched, 0, untouched.size(), CompactionRule{});
  EXPECT_EQ(untouched.size(), original.size());
}

TEST(SampleCompaction, WithoutWindowEdgesKnownOnlySteadyRunsMerge) {
  // The default rule (a caller that knows no edges) is the steady one: a moving power stays.
  const auto original = samples_20ms(200, [](std::size_t k) { return k % 2 == 0 ? 450.0 : 380.0; });
  std::vector<PowerReading> compacted = original;
  compact_samples(compacted, 0, compacted.size(), CompactionRule{});
  EXPECT_EQ(compacted.size(), original.size());
}

}  // namespace
}  // namespace wattwise::sampling
