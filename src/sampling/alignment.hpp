#pragma once

#include <optional>
#include <vector>

#include <cstddef>

#include "core/clock.hpp"
#include "sampling/counter_timeline.hpp"
#include "sampling/power_curve.hpp"

namespace wattwise::sampling {

// How a fine power trace lines up with the energy counter.
struct Alignment {
  // The fine trace runs late by this much: a reading stamped t describes the moment t - offset on the
  // counter's time line. Found by search; 0 when the data cannot tell (too few counter intervals).
  Nanos offset{0};
  // After the shift, per counter interval: counter increment minus the scaled fine-trace integral.
  double residual_rms_j = 0;
  double residual_relative = 0;  // sum of |differences| / sum of counter increments
  double scale = 1;              // counter energy / fine-trace energy over the intervals used
  std::size_t intervals = 0;     // counter intervals the estimate used
  // How far the offset may be from the truth, as the search saw it: the farthest shift searched whose fit
  // the counter cannot tell from the best one (residual within four times the noise of one interval's,
  // the best fit's mean square residual). 0 where not searched (a known shift) or not found (too few
  // intervals). A load the counter's intervals cannot see shifted (a square wave whose period is the read
  // interval, its edges on postings) leaves the whole search this flat: the best shift is then arbitrary.
  Nanos offset_uncertainty{0};
};

// How far the fine trace's offset may be from the truth at the least: one 20 ms sample. Replays of the
// H100 traces under sparse schedules moved it by 5-20 ms on on/off loads (docs/evidence/sampler-replay.txt).
inline constexpr Nanos kOffsetUncertainty = std::chrono::milliseconds(20);

// Chooses the shift within +-`search` that minimises sum_j (dE_j - c * dS_j(shift))^2 over the counter
// pieces with a known increment, where dS_j is the fine trace's integral over the shifted piece and c the
// best common scale for that shift (so a source that reads a few % low does not bias the shift).
// Coarse grid, then a fine grid around the best; ties go to the smaller |shift|, so a load too regular
// to tell (a period shorter than the search) yields 0 rather than an arbitrary value.
Alignment estimate_alignment(const CounterTimeline& counter, const PowerCurve& fine,
                             Nanos search = std::chrono::milliseconds(150));
// The least squares of estimate_alignment over a fixed grid of shifts, summed over stretches of one GPU's
// trace as they come (a long job accounted a minute at a time, measure/phase_folding.hpp): the shift that
// best explains every stretch added so far, as the search over the whole trace would find it.
class AlignmentSums {
 public:
  // Shifts first, first + step, ... (count of them).
  AlignmentSums(Nanos first, Nanos step, std::size_t count);
  // Adds the counter pieces of `counter` with a known increment, inside the fine trace, that begin at or
  // after `from`; returns the end of the last one added (or `from`).
  Nanos add(const CounterTimeline& counter, const PowerCurve& fine, Nanos from);
  // The shift of least residual (ties to the smaller |shift|); nullopt below three pieces.
  std::optional<Nanos> best() const;
  std::size_t intervals() const { return intervals_; }

 private:
  Nanos first_;
  Nanos step_;
  std::vector<double> es_, ss_;
  double ee_ = 0;
  std::size_t intervals_ = 0;
};

// The alignment at a known shift (found over a longer stretch of the same GPU's trace): its best scale and
// residuals, no search.
Alignment alignment_at(const CounterTimeline& counter, const PowerCurve& fine, Nanos shift);

}  // namespace wattwise::sampling
