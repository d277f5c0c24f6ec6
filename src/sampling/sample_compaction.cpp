#include "sampling/sample_compaction.hpp"

#include <algorithm>
#include <cmath>

namespace wattwise::sampling {
namespace {

// Powers near 0 W (a GPU reporting nothing) still count as steady within a hundredth of a watt.
constexpr double kMinToleranceW = 0.01;

bool steady(double min_w, double max_w) {
  return max_w - min_w <= std::max(kSteadyTolerance * std::fabs(min_w), kMinToleranceW);
}

// Whether readings at ascending times lie within kProtectedSpan of a window edge: a cursor over the sorted
// edges, so a pass costs one walk over both.
class EdgeGuard {
 public:
  explicit EdgeGuard(const std::vector<Nanos>& edges, Nanos reach = kProtectedSpan)
      : edges_(edges), reach_(reach) {}
  bool near(Nanos t) {
    while (next_ < edges_.size() && edges_[next_] < t - reach_) ++next_;
    return next_ < edges_.size() && edges_[next_] <= t + reach_;
  }

 private:
  const std::vector<Nanos>& edges_;
  Nanos reach_;
  std::size_t next_ = 0;
};

}  // namespace

std::size_t compact_samples(std::vector<PowerReading>& readings, std::size_t from, std::size_t to,
                            const CompactionRule& rule) {
  to = std::min(to, readings.size());
  from = std::max<std::size_t>(from, 1);  // the first reading has no interval to merge into
  if (from >= to) return to;
  EdgeGuard guard(rule.window_edges);
  // Near an edge a reading stays as it came (with steady_only there are no edges: never).
  auto kept_as_is = [&](std::size_t k) { return !rule.steady_only && guard.near(readings[k].t); };
  std::size_t out = from;  // the next slot to write
  std::size_t j = from;
  while (j < to) {
    if (kept_as_is(j)) {
      readings[out++] = readings[j++];
      continue;
    }
    // readings[out - 1] is the kept left edge of the group starting at j (unchanged by earlier groups:
    // each group ends at a reading whose stamp it keeps).
    const Nanos left = readings[out - 1].t;
    double min_w = readings[j].power_w, max_w = readings[j].power_w;
    double energy_j = readings[j].power_w * to_seconds(readings[j].t - left);
    std::size_t k = j + 1;
    while (k < to && readings[k].t - left <= rule.span && !kept_as_is(k)) {
      const double lo = std::min(min_w, readings[k].power_w), hi = std::max(max_w, readings[k].power_w);
      if (rule.steady_only && !steady(lo, hi)) break;
      min_w = lo;
      max_w = hi;
      energy_j += readings[k].power_w * to_seconds(readings[k].t - readings[k - 1].t);
      ++k;
    }
    PowerReading merged = readings[k - 1];
    const double span_s = to_seconds(merged.t - left);
    if (k - j > 1 && span_s > 0) merged.power_w = energy_j / span_s;
    readings[out++] = merged;
    j = k;
  }
  const std::size_t removed = to - out;
  readings.erase(readings.begin() + static_cast<std::ptrdiff_t>(out),
                 readings.begin() + static_cast<std::ptrdiff_t>(to));
  return to - removed;
}

template <typename Reading>
std::size_t thin_point_readings(std::vector<Reading>& readings, std::size_t from, std::size_t to,
                                const CompactionRule& rule) {
  to = std::min(to, readings.size());
  from = std::max<std::size_t>(from, 1);  // the first reading is the left edge of the range
  if (rule.steady_only || from >= to) return to;
  EdgeGuard guard(rule.window_edges);
  std::size_t out = from;
  for (std::size_t j = from; j < to; ++j) {
    // Kept: near an edge, the range's last, or the last before the gap from the kept one would pass the span.
    const bool keep =
        guard.near(readings[j].t) || j + 1 == to || readings[j + 1].t - readings[out - 1].t > rule.span;
    if (keep) readings[out++] = readings[j];
  }
  readings.erase(readings.begin() + static_cast<std::ptrdiff_t>(out),
                 readings.begin() + static_cast<std::ptrdiff_t>(to));
  return out;
}

std::size_t thin_counter_reads(std::vector<CounterReading>& readings, std::size_t from, std::size_t to,
                               const CompactionRule& rule) {
  to = std::min(to, readings.size());
  from = std::max<std::size_t>(from, 1);  // the first read is the job's baseline
  if (from >= to) return to;
  EdgeGuard guard(rule.window_edges, kProtectedCounterSpan);
  std::size_t out = from;
  for (std::size_t j = from; j < to; ++j) {
    const bool break_after = j + 1 < readings.size() && readings[j + 1].energy_mj < readings[j].energy_mj;
    const bool break_before = readings[j].energy_mj < readings[j - 1].energy_mj;
    const bool keep = guard.near(readings[j].t) || break_after || break_before || j + 1 == to ||
                      readings[j + 1].t - readings[out - 1].t > rule.span;
    if (keep) readings[out++] = readings[j];
  }
  readings.erase(readings.begin() + static_cast<std::ptrdiff_t>(out),
                 readings.begin() + static_cast<std::ptrdiff_t>(to));
  return out;
}

template std::size_t thin_point_readings(std::vector<PowerReading>&, std::size_t, std::size_t,
                                         const CompactionRule&);
template std::size_t thin_point_readings(std::vector<TelemetryReading>&, std::size_t, std::size_t,
                                         const CompactionRule&);

}  // namespace wattwise::sampling
