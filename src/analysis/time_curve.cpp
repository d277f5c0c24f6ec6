#include "analysis/time_curve.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "core/error.hpp"

namespace wattwise::analysis {
namespace {

double det3(const std::array<double, 9>& m) {
  return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) +
         m[2] * (m[3] * m[7] - m[4] * m[6]);
}

// The fitted log time at u = 0 from the sums of the normal equations of log t = a + b u + c u^2:
// s[k] = sum of u^k, sy[k] = sum of u^k log t; with `values` distinct u among the runs.
double fitted_log_time(const std::array<double, 5>& s, const std::array<double, 3>& sy, std::size_t values) {
  if (values >= 3) {  // Cramer's rule for a, the value at u = 0
    const double d = det3({s[0], s[1], s[2], s[1], s[2], s[3], s[2], s[3], s[4]});
    if (std::fabs(d) > 1e-12 * s[0] * s[0] * s[0])
      return det3({sy[0], s[1], s[2], sy[1], s[2], s[3], sy[2], s[3], s[4]}) / d;
  }
  const double d = s[0] * s[2] - s[1] * s[1];
  if (values >= 2 && d > 1e-12 * s[0] * s[0]) return (sy[0] * s[2] - s[1] * sy[1]) / d;
  return sy[0] / s[0];
}

bool positive_time(double t) { return t > 0 && std::isfinite(t); }

}  // namespace

bool times_fittable(std::span<const TimeCurvePoint> points) {
  for (const TimeCurvePoint& p : points)
    if (p.times_s.empty() || !std::all_of(p.times_s.begin(), p.times_s.end(), positive_time)) return false;
  return true;
}

std::vector<double> smoothed_times(std::span<const TimeCurvePoint> points, double half_width_fraction) {
  if (points.empty()) return {};
  if (!(half_width_fraction > 0))
    throw Error(ErrorKind::kInternal, "smoothed_times: the half-width must be positive");
  const double range = points.back().x - points.front().x;
  // u in units of the half-width, so that u^4 stays near 1 whatever the knob's units.
  const double half_width = range > 0 ? half_width_fraction * range : 1;
  std::vector<double> fitted;
  fitted.reserve(points.size());
  for (const TimeCurvePoint& centre : points) {
    std::array<double, 5> s{};
    std::array<double, 3> sy{};
    std::size_t values = 0;
    for (const TimeCurvePoint& p : points) {
      const double u = (p.x - centre.x) / half_width;
      if (std::fabs(u) > 1 + 1e-9) continue;
      if (p.times_s.empty()) throw Error(ErrorKind::kInternal, "smoothed_times: a value without runs");
      ++values;
      for (double t : p.times_s) {
        if (!positive_time(t))
          throw Error(ErrorKind::kInternal, "smoothed_times: a run without a positive, finite time");
        const double y = std::log(t);
        for (std::size_t k = 0; k < 5; ++k) s[k] += std::pow(u, double(k));
        for (std::size_t k = 0; k < 3; ++k) sy[k] += std::pow(u, double(k)) * y;
      }
    }
    fitted.push_back(std::exp(fitted_log_time(s, sy, values)));
  }
  return fitted;
}

}  // namespace wattwise::analysis
