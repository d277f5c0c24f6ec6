#include "analysis/fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>

#include "core/error.hpp"

namespace wattwise::analysis {
namespace {

using Matrix3 = std::array<std::array<double, 4>, 3>;  // augmented [A | rhs]

// Gaussian elimination with partial pivoting; the normal equations of a quadratic are 3x3.
std::array<double, 3> solve(Matrix3 m) {
  for (int col = 0; col < 3; ++col) {
    int pivot = col;
    for (int row = col + 1; row < 3; ++row) {
      if (std::fabs(m[row][col]) > std::fabs(m[pivot][col])) pivot = row;
    }
    std::swap(m[col], m[pivot]);
    if (m[col][col] == 0) throw data_error("quadratic fit is singular; need three distinct x values");
    for (int row = col + 1; row < 3; ++row) {
      const double factor = m[row][col] / m[col][col];
      for (int k = col; k < 4; ++k) m[row][k] -= factor * m[col][k];
    }
  }
  std::array<double, 3> x{};
  for (int row = 2; row >= 0; --row) {
    double sum = m[row][3];
    for (int k = row + 1; k < 3; ++k) sum -= m[row][k] * x[k];
    x[row] = sum / m[row][row];
  }
  return x;
}

}  // namespace

QuadraticFit fit_quadratic(std::span<const double> xs, std::span<const double> ys) {
  if (xs.size() != ys.size()) throw Error(ErrorKind::kInternal, "fit_quadratic: x and y differ in length");
  if (std::set<double>(xs.begin(), xs.end()).size() < 3) {
    throw data_error(
        fmt::format("a quadratic fit needs at least three distinct x values, got {} points", xs.size()));
  }
  QuadraticFit fit;
  fit.x_min = *std::min_element(xs.begin(), xs.end());
  fit.x_max = *std::max_element(xs.begin(), xs.end());
  // Centre and scale x to [-1, 1] so x^2 of values like 300 W does not swamp the normal equations.
  const double centre = (fit.x_min + fit.x_max) / 2;
  const double scale = (fit.x_max - fit.x_min) / 2;
  Matrix3 m{};
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double u = (xs[i] - centre) / scale;
    const std::array<double, 3> basis = {1, u, u * u};
    for (int r = 0; r < 3; ++r) {
      for (int c = 0; c < 3; ++c) m[r][c] += basis[r] * basis[c];
      m[r][3] += basis[r] * ys[i];
    }
  }
  const auto [p, q, s] = solve(m);  // y = p + q*u + s*u^2, u = (x - centre) / scale
  fit.c = s / (scale * scale);
  fit.b = q / scale - 2 * s * centre / (scale * scale);
  fit.a = p - q * centre / scale + s * centre * centre / (scale * scale);

  double mean = 0;
  for (double y : ys) mean += y;
  mean /= static_cast<double>(ys.size());
  double residual = 0, total = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const double u = (xs[i] - centre) / scale;
    const double predicted = p + q * u + s * u * u;
    residual += (ys[i] - predicted) * (ys[i] - predicted);
    total += (ys[i] - mean) * (ys[i] - mean);
  }
  fit.r_squared = total > 0 ? 1 - residual / total : 1.0;

  std::array<double, 3> candidates = {fit.x_min, fit.x_max, fit.x_min};
  if (s > 0) candidates[2] = std::clamp(centre - q / (2 * s) * scale, fit.x_min, fit.x_max);
  fit.optimum_x = fit.x_min;
  fit.optimum_y = fit(fit.x_min);
  for (double x : candidates) {
    if (fit(x) < fit.optimum_y) {
      fit.optimum_x = x;
      fit.optimum_y = fit(x);
    }
  }
  return fit;
}

}  // namespace wattwise::analysis
