#include "sampling/power_curve.hpp"

#include <algorithm>

namespace wattwise::sampling {
namespace {

constexpr double kSecondsPerNano = 1e-9;

}  // namespace

PowerCurve::PowerCurve(std::vector<PowerReading> readings, PowerInterpolation rule) : rule_(rule) {
  auto earlier = [](const PowerReading& a, const PowerReading& b) { return a.t < b.t; };
  if (!std::is_sorted(readings.begin(), readings.end(), earlier)) {
    std::stable_sort(readings.begin(), readings.end(), earlier);
  }
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

double PowerCurve::cumulative_at_index(std::size_t k, std::int64_t t) const {
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

double PowerCurve::cumulative_j(Nanos t, std::size_t& cursor) const {
  if (t_ns_.empty()) return 0;
  while (cursor < t_ns_.size() && t_ns_[cursor] < t.count()) ++cursor;
  return cumulative_at_index(cursor, t.count());
}

}  // namespace wattwise::sampling
