#include "sampling/counter_timeline.hpp"

#include <algorithm>
#include <cmath>

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
  Nanos earliest{0};  // the posting happened after the previous read ...
  Nanos latest{0};    // ... and before this one
};

Nanos median_gap(const std::vector<Knot>& knots) {
  if (knots.size() < 2) return kAssumedUpdatePeriod;
  std::vector<Nanos> gaps;
  gaps.reserve(knots.size() - 1);
  for (std::size_t i = 1; i < knots.size(); ++i) gaps.push_back(knots[i].t - knots[i - 1].t);
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
  return gaps[gaps.size() / 2];
}

// The device posts the counter on a regular clock (every ~100 ms on an H100). A single change is only
// bracketed to one polling period, but many brackets pin a regular grid t = phase + n * period far more
// tightly, provided the polling period does not divide the posting period (then every posting falls at the
// same place in its bracket and nothing is learnt: use e.g. --counter-interval 17). The period comes from a
// least-squares fit to the bracket midpoints (a constant bias of the midpoints does not change the slope);
// the phase is the middle of the region where most brackets, shifted back by n * period, overlap. Each knot
// moves to its grid instant when that lies inside its own bracket. If the grid does not explain the
// brackets (more than a tenth fall outside), the device is not regular and the midpoints stay.
void snap_knots_to_update_grid(std::vector<Knot>& knots, Nanos median_period) {
  if (knots.size() < 8 || median_period <= Nanos{0}) return;
  const double t0 = static_cast<double>(knots.front().t.count());
  // Start from the mean gap (every posting changes the value of a GPU drawing power, so none are missed
  // unless polling stalled), then refine: number the postings, fit, renumber with the fitted period.
  double period = (static_cast<double>(knots.back().t.count()) - t0) / static_cast<double>(knots.size() - 1);
  if (std::fabs(period - static_cast<double>(median_period.count())) > 0.2 * period) return;
  std::vector<double> n(knots.size());
  for (int pass = 0; pass < 2; ++pass) {
    double sum_n = 0, sum_t = 0, sum_nn = 0, sum_nt = 0;
    for (std::size_t i = 0; i < knots.size(); ++i) {
      const double t = static_cast<double>(knots[i].t.count()) - t0;
      n[i] = std::round(t / period);
      sum_n += n[i];
      sum_t += t;
      sum_nn += n[i] * n[i];
      sum_nt += n[i] * t;
    }
    const double count = static_cast<double>(knots.size());
    const double denominator = count * sum_nn - sum_n * sum_n;
    if (denominator <= 0) return;
    period = (count * sum_nt - sum_n * sum_t) / denominator;
  }

  // Sweep over the shifted brackets' ends: +1 at each start, -1 at each end; keep the deepest region.
  std::vector<std::pair<double, int>> ends;
  ends.reserve(2 * knots.size());
  for (std::size_t i = 0; i < knots.size(); ++i) {
    const double shift = t0 + period * n[i];
    ends.emplace_back(static_cast<double>(knots[i].earliest.count()) - shift, +1);
    ends.emplace_back(static_cast<double>(knots[i].latest.count()) - shift, -1);
  }
  std::sort(ends.begin(), ends.end(), [](const auto& a, const auto& b) {
    return a.first < b.first || (a.first == b.first && a.second > b.second);
  });
  int depth = 0, best_depth = 0;
  double best_from = 0, best_to = 0;
  for (std::size_t i = 0; i < ends.size(); ++i) {
    depth += ends[i].second;
    if (depth > best_depth && i + 1 < ends.size()) {
      best_depth = depth;
      best_from = ends[i].first;
      best_to = ends[i + 1].first;
    }
  }
  if (static_cast<std::size_t>(best_depth) * 10 < knots.size() * 9) return;
  const double phase = (best_from + best_to) / 2;
  for (std::size_t i = 0; i < knots.size(); ++i) {
    const Nanos on_grid{static_cast<std::int64_t>(std::llround(t0 + phase + period * n[i]))};
    // A posting right at a read's edge may land a hair outside its bracket: clamp within a small tolerance.
    constexpr Nanos kEdgeTolerance = std::chrono::milliseconds(2);
    if (on_grid >= knots[i].earliest - kEdgeTolerance && on_grid <= knots[i].latest + kEdgeTolerance)
      knots[i].t = std::clamp(on_grid, knots[i].earliest, knots[i].latest);
  }
}

// The posting period. With few knots the gaps are quantised by the polling period (at 17 ms polling a 100 ms
// period shows as 85 or 102 ms gaps), so the median can be off by a whole polling period; the mean over the
// span is off by one bracket divided by the number of gaps. With fewer than eight gaps, a mean within 20% of
// the H100's 100 ms is taken to be that 100 ms.
Nanos update_period_of(const std::vector<Knot>& knots) {
  if (knots.size() < 2) return kAssumedUpdatePeriod;
  const auto gaps = static_cast<std::int64_t>(knots.size() - 1);
  const Nanos mean = (knots.back().t - knots.front().t) / gaps;
  const bool near_assumed = mean > kAssumedUpdatePeriod * 4 / 5 && mean < kAssumedUpdatePeriod * 6 / 5;
  if (gaps < 8 && near_assumed) return kAssumedUpdatePeriod;
  return median_gap(knots) > Nanos{0} && !near_assumed ? median_gap(knots) : mean;
}

}  // namespace

CounterTimeline build_counter_timeline(const std::vector<CounterReading>& readings) {
  CounterTimeline timeline;
  if (readings.empty()) return timeline;
  timeline.first_read = readings.front().t;
  timeline.last_read = readings.back().t;

  std::vector<Knot> knots;
  std::size_t changes = 0;  // millions on a long job: reserve exactly rather than grow by doubling
  for (std::size_t i = 1; i < readings.size(); ++i)
    changes += readings[i].energy_mj != readings[i - 1].energy_mj;
  knots.reserve(changes);
  for (std::size_t i = 1; i < readings.size(); ++i) {
    const CounterReading& before = readings[i - 1];
    const CounterReading& after = readings[i];
    if (after.energy_mj == before.energy_mj) continue;
    const Nanos instant = read_midpoint(before) + (read_midpoint(after) - read_midpoint(before)) / 2;
    std::optional<double> increment_j;
    if (after.energy_mj > before.energy_mj) {
      increment_j = static_cast<double>(after.energy_mj - before.energy_mj) * kJoulesPerMilli;
    }
    knots.push_back(Knot{instant, increment_j, read_midpoint(before), read_midpoint(after)});
  }
  if (knots.empty()) return timeline;

  timeline.update_period = update_period_of(knots);
  snap_knots_to_update_grid(knots, timeline.update_period);
  Nanos begin = knots.front().t - timeline.update_period;
  timeline.pieces.reserve(knots.size());
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
