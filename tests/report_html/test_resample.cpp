#include "analysis/resample.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace wattwise::analysis {
namespace {

TEST(UniformGrid, SpansZeroToEndInclusive) {
  const auto grid = uniform_grid(2.0, 5);
  ASSERT_EQ(grid.size(), 5u);
  EXPECT_DOUBLE_EQ(grid.front(), 0.0);
  EXPECT_DOUBLE_EQ(grid[1], 0.5);
  EXPECT_DOUBLE_EQ(grid.back(), 2.0);
}

TEST(UniformGrid, RefusesFewerThanTwoPoints) {
  EXPECT_ANY_THROW(uniform_grid(1.0, 1));
}

TEST(ResampleLinear, InterpolatesBetweenSamples) {
  const TimeSeries s{{0.0, 1.0, 3.0}, {100.0, 200.0, 400.0}};
  const std::vector<double> grid = {0.0, 0.5, 2.0, 3.0};
  const auto r = resample_linear(s, grid);
  ASSERT_EQ(r.size(), 4u);
  EXPECT_DOUBLE_EQ(*r[0], 100.0);
  EXPECT_DOUBLE_EQ(*r[1], 150.0);
  EXPECT_DOUBLE_EQ(*r[2], 300.0);
  EXPECT_DOUBLE_EQ(*r[3], 400.0);
}

TEST(ResampleLinear, IsAbsentOutsideTheSampledRangeNotZero) {
  const TimeSeries s{{1.0, 2.0}, {50.0, 60.0}};
  const std::vector<double> grid = {0.5, 1.5, 2.5};
  const auto r = resample_linear(s, grid);
  EXPECT_FALSE(r[0].has_value());
  EXPECT_DOUBLE_EQ(*r[1], 55.0);
  EXPECT_FALSE(r[2].has_value());
}

TEST(CumulativeEnergy, IntegratesPowerByTrapezoid) {
  // 100 W for 1 s, then a ramp to 300 W over 2 s: 100 + 2 * 200 = 500 J
  const TimeSeries power{{0.0, 1.0, 3.0}, {100.0, 100.0, 300.0}};
  const auto energy = cumulative_energy_j(power);
  EXPECT_DOUBLE_EQ(energy.value[0], 0.0);
  EXPECT_DOUBLE_EQ(energy.value[1], 100.0);
  EXPECT_DOUBLE_EQ(energy.value[2], 500.0);
}

TEST(MaskedMeanStd, AveragesOnlyWhereRunsHaveData) {
  // Three runs of different lengths on one grid of four points.
  const std::vector<std::vector<std::optional<double>>> runs = {
      {1.0, 2.0, 3.0, 4.0},
      {3.0, 4.0, 5.0, std::nullopt},
      {5.0, 6.0, std::nullopt, std::nullopt},
  };
  const auto stats = masked_mean_std(runs);
  EXPECT_EQ(stats.count, (std::vector<std::size_t>{3, 3, 2, 1}));
  EXPECT_DOUBLE_EQ(*stats.mean[0], 3.0);
  EXPECT_DOUBLE_EQ(*stats.mean[2], 4.0);  // (3 + 5) / 2, not (3 + 5 + 0) / 3
  EXPECT_DOUBLE_EQ(*stats.mean[3], 4.0);  // only the longest run
  EXPECT_DOUBLE_EQ(*stats.stddev[0], 2.0);
  EXPECT_DOUBLE_EQ(*stats.stddev[2], std::sqrt(2.0));
}

TEST(MaskedMeanStd, NeedsTwoRunsForSpreadAndOneForMean) {
  const std::vector<std::vector<std::optional<double>>> runs = {{7.0, std::nullopt},
                                                                {std::nullopt, std::nullopt}};
  const auto stats = masked_mean_std(runs);
  EXPECT_DOUBLE_EQ(*stats.mean[0], 7.0);
  EXPECT_FALSE(stats.stddev[0].has_value());
  EXPECT_FALSE(stats.mean[1].has_value());
  EXPECT_EQ(stats.count[1], 0u);
}

TEST(MaskedMeanStd, RefusesSeriesOfDifferentLengths) {
  const std::vector<std::vector<std::optional<double>>> runs = {{1.0}, {1.0, 2.0}};
  EXPECT_ANY_THROW(masked_mean_std(runs));
}

}  // namespace
}  // namespace wattwise::analysis
