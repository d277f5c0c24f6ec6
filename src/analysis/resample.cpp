#include "analysis/resample.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace wattwise::analysis {

std::vector<double> uniform_grid(double end_s, std::size_t points) {
  if (points < 2 || !(end_s > 0))
    throw Error(ErrorKind::kInternal, "uniform_grid needs >= 2 points and end_s > 0");
  std::vector<double> grid(points);
  const double step = end_s / static_cast<double>(points - 1);
  for (std::size_t i = 0; i < points; ++i) grid[i] = step * static_cast<double>(i);
  grid.back() = end_s;  // exact, whatever the rounding of the steps
  return grid;
}

std::vector<std::optional<double>> resample_linear(const TimeSeries& series, std::span<const double> grid_s) {
  if (series.time_s.size() != series.value.size())
    throw Error(ErrorKind::kInternal, "resample_linear: time and value differ in length");
  std::vector<std::optional<double>> out(grid_s.size());
  const auto& t = series.time_s;
  if (t.empty()) return out;
  for (std::size_t i = 0; i < grid_s.size(); ++i) {
    const double x = grid_s[i];
    if (x < t.front() || x > t.back()) continue;
    // First sample at or after x; x lies in [t[hi-1], t[hi]].
    const auto hi = static_cast<std::size_t>(std::lower_bound(t.begin(), t.end(), x) - t.begin());
    if (t[hi] == x || hi == 0) {
      out[i] = series.value[hi];
      continue;
    }
    const std::size_t lo = hi - 1;
    const double span = t[hi] - t[lo];
    const double w = span > 0 ? (x - t[lo]) / span : 0;
    out[i] = series.value[lo] + w * (series.value[hi] - series.value[lo]);
  }
  return out;
}

TimeSeries cumulative_energy_j(const TimeSeries& power_w) {
  if (power_w.time_s.size() != power_w.value.size())
    throw Error(ErrorKind::kInternal, "cumulative_energy_j: time and value differ in length");
  TimeSeries energy{power_w.time_s, std::vector<double>(power_w.value.size(), 0.0)};
  for (std::size_t i = 1; i < power_w.value.size(); ++i) {
    const double dt = power_w.time_s[i] - power_w.time_s[i - 1];
    energy.value[i] = energy.value[i - 1] + dt * (power_w.value[i] + power_w.value[i - 1]) / 2;
  }
  return energy;
}

MaskedStats masked_mean_std(const std::vector<std::vector<std::optional<double>>>& series) {
  MaskedStats stats;
  if (series.empty()) return stats;
  const std::size_t points = series.front().size();
  for (const auto& s : series)
    if (s.size() != points) throw Error(ErrorKind::kInternal, "masked_mean_std: series differ in length");
  stats.mean.resize(points);
  stats.stddev.resize(points);
  stats.count.resize(points, 0);
  for (std::size_t i = 0; i < points; ++i) {
    double sum = 0;
    std::size_t n = 0;
    for (const auto& s : series) {
      if (!s[i]) continue;
      sum += *s[i];
      ++n;
    }
    stats.count[i] = n;
    if (n == 0) continue;
    const double mean = sum / static_cast<double>(n);
    stats.mean[i] = mean;
    if (n < 2) continue;
    double squares = 0;
    for (const auto& s : series)
      if (s[i]) squares += (*s[i] - mean) * (*s[i] - mean);
    stats.stddev[i] = std::sqrt(squares / static_cast<double>(n - 1));
  }
  return stats;
}

}  // namespace wattwise::analysis
