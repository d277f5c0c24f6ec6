#include "sampling/power_curve.hpp"

#include <algorithm>

namespace wattwise::sampling {
namespace {

constexpr double kSecondsPerNano = 1e-9;

}  // namespace

PowerCurve::PowerCurve(const std::vector<PowerReading>& readings, PowerInterpolation rule) : rule_(rule) {
  auto earlier = [](const PowerReading& a, const PowerReading& b) { return a.t < b.t; };
  // Traces arrive sorted; only an unsorted one pays for a copy (at 10^7 readings the copy alone is 160 MB).
  if (std::is_sorted(readings.begin(), readings.end(), earlier)) {
    index(readings);
  } else {
    std::vector<PowerReading> sorted = readings;
    std::stable_sort(sorted.begin(), sorted.end(), earlier);
    index(sorted);
  }
}

void PowerCurve::index(const std::vector<PowerReading>& readings) {
  t_ns_.reserve(readings.size());
  power_w_.reserve(readings.size());
  cumulative_j_.reserve(readings.size());
  double total_j = 0;
  for (std::size_t k = 0; k < readings.size(); ++k) {
    const std::int64_t t = readings[k].t.count();
    const double p = readings[k].power_w;
    if (k > 0) {
      const double dt_s = static_cast<double>(t - t_ns_.back()) * kSecondsPerNano;
      total_j += rule_ == PowerInterpolation::kTrapezoid ? 0.5 * (p + power_w_.back()) * dt_s : p * dt_s;
    }
    t_ns_.push_back(t);
    power_w_.push_back(p);
    cumulative_j_.push_back(total_j);
  }
}

bool PowerCurve::covers(Nanos t0, Nanos t1, Nanos tolerance) const {
  return usable() && t0 >= first() - tolerance && t1 <= last() + tolerance;
}

// Inlined: it is the inner step of every cumulative query, the offset search's grids included.
[[gnu::always_inline]] inline double PowerCurve::cumulative_at_index(std::size_t k, std::int64_t t) const {
  if (k == 0) return -power_w_.front() * static_cast<double>(t_ns_.front() - t) * kSecondsPerNano;
  if (k == t_ns_.size())
    return cumulative_j_.back() + power_w_.back() * static_cast<double>(t - t_ns_.back()) * kSecondsPerNano;
  const double tau_s = static_cast<double>(t - t_ns_[k - 1]) * kSecondsPerNano;
  if (rule_ == PowerInterpolation::kIntervalMean) return cumulative_j_[k - 1] + power_w_[k] * tau_s;
  const double span_s = static_cast<double>(t_ns_[k] - t_ns_[k - 1]) * kSecondsPerNano;
  const double slope = (power_w_[k] - power_w_[k - 1]) / span_s;
  return cumulative_j_[k - 1] + power_w_[k - 1] * tau_s + 0.5 * slope * tau_s * tau_s;
}

double PowerCurve::cumulative_j(Nanos t) const {
  if (t_ns_.empty()) return 0;
  // First reading at or after t: t lies in (t[k-1], t[k]].
  const auto k =
      static_cast<std::size_t>(std::lower_bound(t_ns_.begin(), t_ns_.end(), t.count()) - t_ns_.begin());
  return cumulative_at_index(k, t.count());
}

std::size_t PowerCurve::seek(std::size_t from, std::int64_t t) const {
  const std::size_t n = t_ns_.size();
  if (from >= n || t_ns_[from] >= t) return from;
  // Gallop: double the stride until a reading at or after t is passed, then binary search that stride.
  std::size_t below = from;  // t_ns_[below] < t
  std::size_t stride = 1;
  while (below + stride < n && t_ns_[below + stride] < t) {
    below += stride;
    stride *= 2;
  }
  const auto end = t_ns_.begin() + static_cast<std::ptrdiff_t>(std::min(below + stride, n));
  return static_cast<std::size_t>(
      std::lower_bound(t_ns_.begin() + static_cast<std::ptrdiff_t>(below) + 1, end, t) - t_ns_.begin());
}

double PowerCurve::cumulative_j(Nanos t, std::size_t& cursor) const {
  if (t_ns_.empty()) return 0;
  cursor = seek(cursor, t.count());
  return cumulative_at_index(cursor, t.count());
}

[[gnu::always_inline]] inline void PowerCurve::fill_in_interval(std::size_t k, std::int64_t t,
                                                                std::int64_t step_ns,
                                                                std::span<double> out) const {
  // cumulative_at_index's cases, decided once for the whole run of grid points (same arithmetic).
  const auto seconds_from = [](std::int64_t later, std::int64_t earlier) {
    return static_cast<double>(later - earlier) * kSecondsPerNano;
  };
  if (k == 0) {
    for (double& value : out) {
      value = -power_w_.front() * seconds_from(t_ns_.front(), t);
      t += step_ns;
    }
  } else if (k == t_ns_.size()) {
    for (double& value : out) {
      value = cumulative_j_.back() + power_w_.back() * seconds_from(t, t_ns_.back());
      t += step_ns;
    }
  } else if (rule_ == PowerInterpolation::kIntervalMean) {
    for (double& value : out) {
      value = cumulative_j_[k - 1] + power_w_[k] * seconds_from(t, t_ns_[k - 1]);
      t += step_ns;
    }
  } else {
    const double span_s = seconds_from(t_ns_[k], t_ns_[k - 1]);
    const double slope = (power_w_[k] - power_w_[k - 1]) / span_s;
    for (double& value : out) {
      const double tau_s = seconds_from(t, t_ns_[k - 1]);
      value = cumulative_j_[k - 1] + power_w_[k - 1] * tau_s + 0.5 * slope * tau_s * tau_s;
      t += step_ns;
    }
  }
}

void PowerCurve::cumulative_j_grid(Nanos start, Nanos step, std::span<double> out,
                                   std::size_t& cursor) const {
  if (t_ns_.empty()) {
    std::fill(out.begin(), out.end(), 0.0);
    return;
  }
  const std::int64_t t0 = start.count(), step_ns = step.count();
  cursor = seek(cursor, t0);
  // Interval by interval rather than point by point: each reading interval (t[k-1], t[k]] takes the run
  // of grid points that fall in it, found by arithmetic, so the inner loops have no data-dependent branch.
  const std::size_t n = t_ns_.size();
  std::size_t k = cursor;
  std::size_t i = 0;
  while (i < out.size()) {
    const std::int64_t t = t0 + static_cast<std::int64_t>(i) * step_ns;
    while (k < n && t_ns_[k] < t) ++k;
    std::size_t end = out.size();
    if (k < n && step_ns > 0) {
      // Points up to t[k] are in this interval: t0 + j * step <= t[k].
      end = std::min(end, static_cast<std::size_t>((t_ns_[k] - t0) / step_ns) + 1);
    }
    fill_in_interval(k, t, step_ns, out.subspan(i, end - i));
    i = end;
  }
}

}  // namespace wattwise::sampling
