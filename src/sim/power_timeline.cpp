#include "sim/power_timeline.hpp"

#include <algorithm>
#include <cmath>

namespace wattwise::sim {

PowerTimeline::PowerTimeline(Nanos start, double power_w, Thermal thermal, Drift drift)
    : thermal_(thermal), drift_(drift), origin_(start) {
  // Start in thermal equilibrium with the initial power.
  segments_.push_back(Segment{start, power_w, 0.0, thermal_.ambient_c + thermal_.c_per_w * power_w});
}

void PowerTimeline::set_power_from(Nanos t, double power_w) {
  while (segments_.size() > 1 && segments_.back().start >= t) segments_.pop_back();
  if (segments_.size() == 1 && segments_.front().start >= t) {
    // Replacing the only segment: keep its anchor, change the power from its start.
    segments_.front().power_w = power_w;
    return;
  }
  const Segment& last = segments_.back();
  segments_.push_back(Segment{t, power_w, energy_j_at(t), temperature_after(last, t)});
}

const PowerTimeline::Segment& PowerTimeline::segment_at(Nanos t) const {
  // Few segments (the last ~3 s); search from the newest, where queries land.
  for (auto it = segments_.rbegin(); it != segments_.rend(); ++it) {
    if (it->start <= t) return *it;
  }
  return segments_.front();
}

double PowerTimeline::drift_integral_s(Nanos t) const {
  return drift_.integral_s(to_seconds(t - origin_));
}

double PowerTimeline::power_w_at(Nanos t) const {
  if (!drift_.any()) return segment_at(t).power_w;
  return segment_at(t).power_w * drift_.factor_at(to_seconds(t - origin_));
}

double PowerTimeline::energy_j_at(Nanos t) const {
  const Segment& segment = segment_at(t);
  if (!drift_.any()) return segment.energy_j + segment.power_w * to_seconds(t - segment.start);
  return segment.energy_j + segment.power_w * (drift_integral_s(t) - drift_integral_s(segment.start));
}

double PowerTimeline::temperature_after(const Segment& segment, Nanos t) const {
  const double steady_c = thermal_.ambient_c + thermal_.c_per_w * segment.power_w;
  const double elapsed_s = std::max(to_seconds(t - segment.start), 0.0);
  return steady_c + (segment.temperature_c - steady_c) * std::exp(-elapsed_s / thermal_.tau_s);
}

double PowerTimeline::temperature_c_at(Nanos t) const {
  return temperature_after(segment_at(t), t);
}

void PowerTimeline::forget_before(Nanos t) {
  while (segments_.size() > 1 && segments_[1].start <= t) segments_.pop_front();
}

}  // namespace wattwise::sim
