#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/clock.hpp"
#include "sampling/trace.hpp"

namespace wattwise::sampling {

// How to fill the time between two power readings.
enum class PowerInterpolation {
  kTrapezoid,     // point readings (instantaneous, averaged power): linear between them
  kIntervalMean,  // buffered samples: each is the mean over the interval since the previous one
};

// The cumulative energy of a sampled power trace, E(t) = integral of P from the first reading to t,
// precomputed once so that any window costs two binary searches. Beyond the readings the edge value is
// held, which lets a slightly shifted window (alignment) still be answered.
class PowerCurve {
 public:
  PowerCurve() = default;
  // `readings` are sorted by time here (in a copy) if they are not already.
  PowerCurve(const std::vector<PowerReading>& readings, PowerInterpolation rule);

  bool usable() const { return t_ns_.size() >= 2; }
  Nanos first() const { return Nanos{t_ns_.front()}; }
  Nanos last() const { return Nanos{t_ns_.back()}; }
  std::size_t size() const { return t_ns_.size(); }
  // True when [t0, t1] lies within the readings, give or take `tolerance` at each end.
  bool covers(Nanos t0, Nanos t1, Nanos tolerance) const;

  double cumulative_j(Nanos t) const;
  // Same, for queries in ascending order: `cursor` starts at 0 and is moved forward (a galloping search,
  // so a query far ahead costs O(log distance) rather than a walk over every reading in between).
  double cumulative_j(Nanos t, std::size_t& cursor) const;
  // cumulative_j at `start + i * step` for each i < out.size() (step >= 0), into `out`, in one pass:
  // what the offset search needs at every boundary. `cursor` works as above, for ascending `start`s.
  void cumulative_j_grid(Nanos start, Nanos step, std::span<double> out, std::size_t& cursor) const;
  double integral_j(Nanos t0, Nanos t1) const { return cumulative_j(t1) - cumulative_j(t0); }

 private:
  void index(const std::vector<PowerReading>& sorted_readings);
  double cumulative_at_index(std::size_t k, std::int64_t t) const;  // t in (t[k-1], t[k]], or k at the edges
  // The first index at or after `from` whose reading is at or after t (what a forward walk would reach).
  std::size_t seek(std::size_t from, std::int64_t t) const;
  // cumulative_at_index(k, ...) at t, t + step_ns, ... for each element of `out`, all in interval k.
  void fill_in_interval(std::size_t k, std::int64_t t, std::int64_t step_ns, std::span<double> out) const;

  PowerInterpolation rule_ = PowerInterpolation::kTrapezoid;
  std::vector<std::int64_t> t_ns_;
  std::vector<double> power_w_;
  std::vector<double> cumulative_j_;  // at each reading
};

}  // namespace wattwise::sampling
