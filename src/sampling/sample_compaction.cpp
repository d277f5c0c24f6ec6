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

}  // namespace

std::size_t compact_steady_samples(std::vector<PowerReading>& readings, std::size_t from, std::size_t to) {
  to = std::min(to, readings.size());
  from = std::max<std::size_t>(from, 1);  // the first reading has no interval to merge into
  if (from >= to) return to;
  std::size_t out = from;  // the next slot to write
  std::size_t j = from;
  while (j < to) {
    // readings[out - 1] is the kept left edge of the group starting at j (unchanged by earlier groups:
    // each group ends at a reading whose stamp it keeps).
    const Nanos left = readings[out - 1].t;
    double min_w = readings[j].power_w, max_w = readings[j].power_w;
    double energy_j = readings[j].power_w * to_seconds(readings[j].t - left);
    std::size_t k = j + 1;
    while (k < to && readings[k].t - left <= kCompactedSpan) {
      const double lo = std::min(min_w, readings[k].power_w), hi = std::max(max_w, readings[k].power_w);
      if (!steady(lo, hi)) break;
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

}  // namespace wattwise::sampling
