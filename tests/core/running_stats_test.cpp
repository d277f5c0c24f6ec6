#include "core/running_stats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace wattwise {
namespace {

TEST(RunningStats, AMillionValuesGiveTheTwoPassMeanAndCvOfTheWholeList) {
  // Iteration energies of ~1 kJ with a CV of 0.1%: the case where a sum of squares loses its digits.
  std::mt19937_64 rng(11);
  std::normal_distribution<double> draw(1000.0, 1.0);
  std::vector<double> values;
  RunningStats stats;
  for (int i = 0; i < 1'000'000; ++i) {
    values.push_back(draw(rng));
    stats.add(values.back());
  }
  double sum = 0;
  for (double v : values) sum += v;
  const double mean = sum / static_cast<double>(values.size());
  double squares = 0;
  for (double v : values) squares += (v - mean) * (v - mean);
  const double sd = std::sqrt(squares / static_cast<double>(values.size() - 1));
  ASSERT_EQ(stats.count(), values.size());
  EXPECT_NEAR(*stats.mean(), mean, 1e-9 * mean);
  EXPECT_NEAR(*stats.stddev(), sd, 1e-6 * sd);
  EXPECT_NEAR(*stats.cv(), sd / mean, 1e-6 * sd / mean);
  EXPECT_EQ(*stats.min(), *std::min_element(values.begin(), values.end()));
  EXPECT_EQ(*stats.max(), *std::max_element(values.begin(), values.end()));
}

TEST(RunningStats, TooFewValuesHaveNoSpread) {
  RunningStats stats;
  EXPECT_FALSE(stats.mean());
  EXPECT_FALSE(stats.min());
  stats.add(5);
  EXPECT_EQ(*stats.mean(), 5);
  EXPECT_FALSE(stats.stddev());
  EXPECT_FALSE(stats.cv());
  stats.add(-5);
  EXPECT_EQ(*stats.mean(), 0);
  EXPECT_FALSE(stats.cv()) << "no CV of a zero mean";
  EXPECT_NEAR(*stats.stddev(), std::sqrt(50.0), 1e-12);
}

}  // namespace
}  // namespace wattwise
