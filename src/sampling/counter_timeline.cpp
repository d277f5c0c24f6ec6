#include "sampling/counter_timeline.hpp"

#include <algorithm>

namespace wattwise::sampling {
namespace {

// Without two knots there is no measured update period: use the H100's (shared/reference/nvml-h100.md).
constexpr Nanos kAssumedUpdatePeriod = std::chrono::milliseconds(100);
constexpr double kJoulesPerMilli = 1e-3;

Nanos read_midpoint(const CounterReading& r) {
  return r.t - r.read_cost / 2;
}

struct Knot {
  Nanos t;
  std::optional<double> increment_j;
};

Nanos median_gap(const std::vector<Knot>& knots) {
  if (knots.size() < 2) return kAssumedUpdatePeriod;
  std::vector<Nanos> gaps;
  gaps.reserve(knots.size() - 1);
  for (std::size_t i = 1; i < knots.size(); ++i) gaps.push_back(knots[i].t - knots[i - 1].t);
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
  return gaps[gaps.size() / 2];
}

}  // namespace

CounterTimeline build_counter_timeline(const std::vector<CounterReading>& readings) {
  CounterTimeline timeline;
  if (readings.empty()) return timeline;
  timeline.first_read = readings.front().t;
  timeline.last_read = readings.back().t;

  std::vector<Knot> knots;
  for (std::size_t i = 1; i < readings.size(); ++i) {
    const CounterReading& before = readings[i - 1];
    const CounterReading& after = readings[i];
    if (after.energy_mj == before.energy_mj) continue;
    const Nanos instant = read_midpoint(before) + (read_midpoint(after) - read_midpoint(before)) / 2;
    std::optional<double> increment_j;
    if (after.energy_mj > before.energy_mj) {
      increment_j = static_cast<double>(after.energy_mj - before.energy_mj) * kJoulesPerMilli;
    }
    knots.push_back(Knot{instant, increment_j});
  }
  if (knots.empty()) return timeline;

  timeline.update_period = median_gap(knots);
  Nanos begin = knots.front().t - timeline.update_period;
  for (const Knot& knot : knots) {
    timeline.pieces.push_back(CounterPiece{begin, knot.t, knot.increment_j});
    if (knot.increment_j) {
      timeline.known_energy_j += *knot.increment_j;
    } else {
      timeline.has_break = true;
    }
    begin = knot.t;
  }
  return timeline;
}

}  // namespace wattwise::sampling
