#include <gtest/gtest.h>

#include <random>

#include <cmath>
#include <vector>

#include "analysis/statistics.hpp"

namespace wattwise::analysis {
namespace {

TEST(Statistics, SummarizeGivesMeanSampleStdAndStudentInterval) {
  // By hand: mean 5, squares sum 32, sample variance 32/7, t(7) = 2.365.
  const std::vector<double> values = {2, 4, 4, 4, 5, 5, 7, 9};
  const Summary s = summarize(values);
  EXPECT_EQ(s.n, 8);
  EXPECT_DOUBLE_EQ(s.mean, 5.0);
  ASSERT_TRUE(s.stddev.has_value());
  EXPECT_NEAR(*s.stddev, std::sqrt(32.0 / 7.0), 1e-12);
  ASSERT_TRUE(s.ci95_half.has_value());
  EXPECT_NEAR(*s.ci95_half, 2.365 * std::sqrt(32.0 / 7.0) / std::sqrt(8.0), 5e-4);
}

TEST(Statistics, TwoValuesUseTheWideOneDegreeQuantile) {
  const std::vector<double> values = {10, 12};  // mean 11, std sqrt(2), t(1) = 12.706
  const Summary s = summarize(values);
  EXPECT_NEAR(*s.ci95_half, 12.706 * std::sqrt(2.0) / std::sqrt(2.0), 5e-4);
}

TEST(Statistics, OneValueHasNoSpread) {
  const std::vector<double> values = {42};
  const Summary s = summarize(values);
  EXPECT_EQ(s.n, 1);
  EXPECT_DOUBLE_EQ(s.mean, 42);
  EXPECT_FALSE(s.stddev.has_value());
  EXPECT_FALSE(s.ci95_half.has_value());
}

TEST(Statistics, TQuantileMatchesPublishedTablesAndTakesFractionalDf) {
  // Published two-sided 95% values (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2), to their three decimals.
  EXPECT_NEAR(t_quantile_975(1), 12.706, 5e-4);
  EXPECT_NEAR(t_quantile_975(4), 2.776, 5e-4);
  EXPECT_NEAR(t_quantile_975(30), 2.042, 5e-4);
  EXPECT_NEAR(t_quantile_975(100000), 1.960, 5e-4);
  // Welch's fractional df lies between its neighbours, no longer rounded to the wider one.
  EXPECT_LT(t_quantile_975(4.7), t_quantile_975(4));
  EXPECT_GT(t_quantile_975(4.7), t_quantile_975(5));
  // Below one degree of freedom the widest stated interval (df 1).
  EXPECT_DOUBLE_EQ(t_quantile_975(0.3), t_quantile_975(1));
  // The quantile inverts the distribution: P(T <= t) = p at both tails.
  EXPECT_NEAR(students_t_quantile(0.025, 7), -students_t_quantile(0.975, 7), 1e-12);
}

TEST(Statistics, WelchSeesADifferenceLargerThanTheNoise) {
  const std::vector<double> a = {10.0, 10.1, 9.9};
  const std::vector<double> b = {8.0, 8.1, 7.9};
  EXPECT_EQ(welch_differs(a, b), std::optional<bool>(true));
}

TEST(Statistics, WelchDoesNotSeeADifferenceSmallerThanTheNoise) {
  const std::vector<double> a = {10, 12, 8};
  const std::vector<double> b = {9.5, 11.5, 7.5};
  EXPECT_EQ(welch_differs(a, b), std::optional<bool>(false));
}

TEST(Statistics, WelchIsUnknownWithoutRepeats) {
  const std::vector<double> a = {10};
  const std::vector<double> b = {8, 8.1};
  EXPECT_FALSE(welch_differs(a, b).has_value());
}

TEST(Statistics, AnovaTellsGroupsApartOnlyBeyondTheirSpread) {
  EXPECT_EQ(anova_differs({{1, 2, 3}, {11, 12, 13}}), std::optional<bool>(true));
  EXPECT_EQ(anova_differs({{1, 2, 3}, {1.5, 2.5, 3.5}}), std::optional<bool>(false));
  EXPECT_EQ(anova_differs({{5, 5}, {5, 5}}), std::optional<bool>(false));  // no spread, no difference
  EXPECT_EQ(anova_differs({{5, 5}, {6, 6}}), std::optional<bool>(true));   // no spread, a difference
  EXPECT_FALSE(anova_differs({{1}, {2}, {3}}).has_value());                // no group has two values
  EXPECT_FALSE(anova_differs({{1, 2, 3}}).has_value());                    // one group
  // Its false-claim rate on 31 identical groups of 5 stays at its 5%, where picking the lowest group's
  // mean and testing it against another would claim far more.
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  int claims = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    std::vector<std::vector<double>> groups(31);
    for (auto& g : groups)
      for (int i = 0; i < 5; ++i) g.push_back(normal(rng));
    claims += anova_differs(groups).value_or(false);
  }
  EXPECT_NEAR(claims, 50, 22);
}

}  // namespace
}  // namespace wattwise::analysis
