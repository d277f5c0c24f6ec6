#include "tune/probe.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace wattwise::tune {
namespace {

const analysis::MetricSpec kEnergy{analysis::MetricKind::kEnergy, 0};

TEST(Probe, EstimatesTheMetricOnTheMeansNormalisedToTheReference) {
  Probe p(200);
  for (double e : {9.0, 10.0, 11.0}) p.add(0.1, e);
  const auto e = p.estimate(kEnergy, {20, 0.1}, 0.95);
  ASSERT_TRUE(e);
  EXPECT_DOUBLE_EQ(e->score, 0.5);
  EXPECT_EQ(e->iterations, 3u);
  // sd of 0.45, 0.5, 0.55 is 0.05; t(2) = 4.303; half = 4.303 * 0.05 / sqrt(3)
  EXPECT_NEAR(e->score_half, 4.303 * 0.05 / std::sqrt(3.0), 1e-3);
}

TEST(Probe, IterationsWithoutEnergyCountForTimeOnly) {
  Probe p(200);
  p.add(0.1, std::nullopt);
  EXPECT_FALSE(p.estimate(kEnergy, {20, 0.1}, 0.95));
  p.add(0.3, 10.0);
  const auto e = p.estimate(kEnergy, {20, 0.1}, 0.95);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->iterations, 1u);
  EXPECT_DOUBLE_EQ(e->mean_time_s, 0.2);
}

TEST(NoisePool, AProbeWithALuckySpreadGetsThePooledInterval) {
  // Five identical iterations: alone, an interval of zero width, which would end the probe at once.
  Probe lucky(200);
  for (int i = 0; i < 5; ++i) lucky.add(0.1, 10.0);
  const auto own = lucky.estimate(kEnergy, {10, 0.1}, 0.95);
  ASSERT_TRUE(own);
  EXPECT_EQ(own->score_half, 0);
  // Another probe of this job showed its real spread (10% CV).
  Probe noisy(250);
  for (double e : {9.0, 11.0, 9.0, 11.0, 10.0, 10.0}) noisy.add(0.1, e);
  NoisePool pool;
  pool.add(*noisy.estimate(kEnergy, {10, 0.1}, 0.95));
  const ProbeEstimate pooled = pool.pooled(*own, 0.95);
  EXPECT_GT(pooled.score_half, 0.05);
  EXPECT_EQ(pooled.score, own->score);
}

TEST(Probe, NeighbouringIterationsThatAreAlikeWidenTheInterval) {
  // The same ten values twice: in runs of alike neighbours (as a GPU's wandering clocks make them), and
  // alternating. Same mean and spread; the runs are worth fewer independent iterations.
  Probe runs(200);
  Probe alternating(200);
  const std::vector<double> runs_j = {9, 9, 9, 9, 9, 11, 11, 11, 11, 11};
  const std::vector<double> alternating_j = {9, 11, 9, 11, 9, 11, 9, 11, 9, 11};
  for (std::size_t i = 0; i < runs_j.size(); ++i) {
    runs.add(0.1, runs_j[i]);
    alternating.add(0.1, alternating_j[i]);
  }
  const auto wide = runs.estimate(kEnergy, {10, 0.1}, 0.95);
  const auto plain = alternating.estimate(kEnergy, {10, 0.1}, 0.95);
  ASSERT_TRUE(wide && plain);
  EXPECT_DOUBLE_EQ(wide->score, plain->score);
  // Lag-1 correlation of the runs: 8 alike neighbour pairs and 1 unlike over 10 squared deviations, 0.7 ->
  // sqrt((1 + 0.7) / (1 - 0.7)) times wider; the alternating sequence's is negative, taken at 0.
  EXPECT_NEAR(wide->score_half / plain->score_half, std::sqrt(1.7 / 0.3), 1e-9);
}

}  // namespace
}  // namespace wattwise::tune
