#include <gtest/gtest.h>

#include <vector>

#include "analysis/fit.hpp"
#include "core/error.hpp"

namespace wattwise::analysis {
namespace {

TEST(Fit, RecoversAnExactParabolaAndItsMinimum) {
  // y = 2 - 3x + 0.5x^2 has its vertex at x = 3, y = -2.5.
  std::vector<double> xs, ys;
  for (double x = 0; x <= 6; x += 1) {
    xs.push_back(x);
    ys.push_back(2 - 3 * x + 0.5 * x * x);
  }
  const QuadraticFit fit = fit_quadratic(xs, ys);
  EXPECT_NEAR(fit.a, 2, 1e-9);
  EXPECT_NEAR(fit.b, -3, 1e-9);
  EXPECT_NEAR(fit.c, 0.5, 1e-9);
  EXPECT_NEAR(fit.r_squared, 1, 1e-12);
  EXPECT_NEAR(fit.optimum_x, 3, 1e-9);
  EXPECT_NEAR(fit.optimum_y, -2.5, 1e-9);
}

TEST(Fit, WorksAtPowerLimitScale) {
  // Energy (kJ) against power limit (W), a parabola with its minimum at 180 W.
  std::vector<double> xs, ys;
  for (double w = 150; w <= 300; w += 5) {
    xs.push_back(w);
    ys.push_back(100 + 0.002 * (w - 180) * (w - 180));
  }
  const QuadraticFit fit = fit_quadratic(xs, ys);
  EXPECT_NEAR(fit.optimum_x, 180, 1e-6);
  EXPECT_NEAR(fit(250), 100 + 0.002 * 70 * 70, 1e-8);
}

TEST(Fit, MinimumOutsideTheDataIsClampedToTheRange) {
  const std::vector<double> xs = {0, 1, 2, 3};
  const std::vector<double> ys = {9, 4, 1,
                                  0};  // (x - 3)^2, minimum at the upper end... and beyond if extended
  const QuadraticFit fit = fit_quadratic(xs, ys);
  EXPECT_NEAR(fit.optimum_x, 3, 1e-9);
  const std::vector<double> falling = {10, 8, 5, 1};  // concave: lowest at an end
  EXPECT_NEAR(fit_quadratic(xs, falling).optimum_x, 3, 1e-9);
}

TEST(Fit, NoisyDataHasRSquaredBelowOne) {
  const std::vector<double> xs = {1, 2, 3, 4, 5};
  const std::vector<double> ys = {1, 3, 2, 5, 4};
  const QuadraticFit fit = fit_quadratic(xs, ys);
  EXPECT_GT(fit.r_squared, 0);
  EXPECT_LT(fit.r_squared, 1);
}

TEST(Fit, NeedsThreeDistinctX) {
  const std::vector<double> xs = {1, 1, 2};
  const std::vector<double> ys = {1, 2, 3};
  EXPECT_THROW(fit_quadratic(xs, ys), Error);
}

}  // namespace
}  // namespace wattwise::analysis
