#include "analysis/curve_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <tuple>

#include "core/error.hpp"

namespace wattwise::analysis {

double CurvePoint::mean() const {
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

namespace {

// The window of points around the lowest eligible mean (the adaptive sweep's, tuned on seeds 101..120):
// the points within kFitHalfWidthFraction of the range of it and within kFitMaxExcess of its metric, at
// least its nearest neighbour on each side unless that one is far above it, then widened to three points
// on the side that is not steep, beyond the half-width if need be.
std::pair<std::size_t, std::size_t> window_of(std::span<const CurvePoint> p) {
  std::size_t lowest = p.size();
  for (std::size_t i = 0; i < p.size(); ++i)
    if (p[i].eligible && (lowest == p.size() || p[i].mean() < p[lowest].mean())) lowest = i;
  if (lowest == p.size()) throw Error(ErrorKind::kInternal, "fit_curve: no eligible point");
  const double half_width = kFitHalfWidthFraction * (p.back().x - p.front().x) * (1 + 1e-9);
  const double lowest_mean = p[lowest].mean();
  const auto below_excess = [&](std::size_t i) {
    return p[i].mean() - lowest_mean <= kFitMaxExcess * std::fabs(lowest_mean);
  };
  const auto in_window = [&](std::size_t i) {
    return std::fabs(p[i].x - p[lowest].x) <= half_width && below_excess(i);
  };
  std::size_t first = lowest, last = lowest;
  while (first > 0 && in_window(first - 1)) --first;
  while (last + 1 < p.size() && in_window(last + 1)) ++last;
  // A neighbour far above the lowest mean is not forced in: the vertex then lies at the window's edge, and
  // an adaptive sweep refines towards that neighbour, which measures the steep side where it matters.
  if (first == lowest && first > 0 && below_excess(first - 1)) --first;
  if (last == lowest && last + 1 < p.size() && below_excess(last + 1)) ++last;
  while (last - first < 2 && last + 1 < p.size() && below_excess(last + 1)) ++last;
  while (last - first < 2 && first > 0 && below_excess(first - 1)) --first;
  // At an end of the range or between steep sides (a sharp optimum): the nearest below, then above.
  while (last - first < 2) {
    if (first > 0)
      --first;
    else
      ++last;
  }
  return {first, last};
}

// Where the quadratic is lowest on [lo, hi].
double lowest_on(const QuadraticFit& q, double lo, double hi) {
  double best = lo;
  if (q(hi) < q(best)) best = hi;
  if (q.c > 0) {
    const double vertex = std::clamp(-q.b / (2 * q.c), lo, hi);
    if (q(vertex) < q(best)) best = vertex;
  }
  return best;
}

double percentile(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  const double rank = fraction * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(rank));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (rank - static_cast<double>(below)) * (values[above] - values[below]);
}

}  // namespace

CurveFit fit_curve(std::span<const CurvePoint> points, std::size_t bootstrap) {
  if (points.size() < 3) throw Error(ErrorKind::kInternal, "fit_curve: fewer than three points");
  CurveFit fit;
  std::tie(fit.first, fit.last) = window_of(points);
  std::vector<double> xs, ys;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (std::size_t i = fit.first; i <= fit.last; ++i) {
    for (double v : points[i].values) {
      xs.push_back(points[i].x);
      ys.push_back(v);
    }
    if (points[i].eligible) lo = std::min(lo, points[i].x), hi = std::max(hi, points[i].x);
  }
  fit.quadratic = fit_quadratic(xs, ys);
  const QuadraticFit& q = fit.quadratic;
  fit.optimum_x = lowest_on(q, lo, hi);
  fit.optimum_y = q(fit.optimum_x);

  // The pick: the fastest eligible window point whose fitted metric is within the margin of the optimum,
  // or of the best fitted point when none is (the optimum between two points).
  double best_fitted = std::numeric_limits<double>::infinity();
  for (std::size_t i = fit.first; i <= fit.last; ++i)
    if (points[i].eligible) best_fitted = std::min(best_fitted, q(points[i].x));
  const double threshold = std::max(best_fitted, fit.optimum_y + kFitTieMargin * std::fabs(fit.optimum_y));
  bool found = false;
  for (std::size_t i = fit.first; i <= fit.last; ++i) {
    if (!points[i].eligible || q(points[i].x) > threshold) continue;
    if (!found || points[i].mean_time_s < points[fit.pick].mean_time_s) fit.pick = i;
    found = true;
  }

  // At an end of what was measured, with the curve still falling towards it: the optimum may lie beyond.
  if (fit.first == 0 && points.front().eligible && fit.optimum_x == points.front().x &&
      q.b + 2 * q.c * fit.optimum_x > 0)
    fit.edge = "below";
  if (fit.last + 1 == points.size() && points.back().eligible && fit.optimum_x == points.back().x &&
      q.b + 2 * q.c * fit.optimum_x < 0)
    fit.edge = "above";

  fit.optimum_low = fit.optimum_high = fit.optimum_x;
  if (bootstrap > 0 && xs.size() > 3) {
    // Residual bootstrap: the fitted curve plus residuals drawn with replacement (scaled for the three
    // parameters fitted), refitted on the same window; single runs contribute as repeats do.
    std::vector<double> residuals;
    const double scale = std::sqrt(double(xs.size()) / double(xs.size() - 3));
    for (std::size_t k = 0; k < xs.size(); ++k) residuals.push_back((ys[k] - q(xs[k])) * scale);
    std::mt19937_64 rng(20261126);
    std::vector<double> optima, resampled(ys.size());
    for (std::size_t b = 0; b < bootstrap; ++b) {
      for (std::size_t k = 0; k < xs.size(); ++k) resampled[k] = q(xs[k]) + residuals[rng() % residuals.size()];
      optima.push_back(lowest_on(fit_quadratic(xs, resampled), lo, hi));
    }
    fit.optimum_low = percentile(optima, 0.05);
    fit.optimum_high = percentile(optima, 0.95);
  }
  return fit;
}

}  // namespace wattwise::analysis
