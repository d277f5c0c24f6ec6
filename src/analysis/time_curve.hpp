#pragma once

#include <span>
#include <vector>

namespace wattwise::analysis {

// The time each measured value of a numeric hardware knob takes, read off the curve through its neighbours
// rather than off its own runs alone. "At most 10% slower than the reference" is a cut on time: judged on
// each value's own mean (one to five runs of ~1% noise each), the values either side of the cut swap places
// by chance and the headline's pick with them, over the limit in 12-22% of sweeps (bench_adaptive_regret,
// seeds 101..120). Time changes smoothly with a power limit or a clock, so a local quadratic of log time
// over the runs of the neighbouring values averages their noise in (docs/evidence/adaptive-sweep.md "The
// headline judged on the time curve"). `analyze` judges the headline's limit on it and the adaptive sweep
// refines the limit's crossing by it, so that both judge alike.

struct TimeCurvePoint {
  double x = 0;                 // the knob's value
  std::vector<double> times_s;  // one per run, at least one, each positive
};

// The local fit's half-width as a fraction of the measured range: 0.3 (45 W of a 150..300 W sweep) was
// chosen on bench_adaptive_regret's seeds 101..120 (local linear at 0.05-0.15 and local quadratic at
// 0.05-0.4 tried): narrower, the reference's time (at the end of the range, its fit one-sided) stays as
// noisy as its own mean; the local linear bends too little and judges values near the limit too slow.
inline constexpr double kTimeFitHalfWidthFraction = 0.3;

// Whether smoothed_times can take these points: every value has runs and every run a positive, finite time.
// A run stored by another tool, or edited by hand, may have a time of 0; callers then judge on the means
// (and say so) rather than hand it on.
bool times_fittable(std::span<const TimeCurvePoint> points);

// Points ascending in x, distinct, times_fittable. The fitted time of each point: a least-squares quadratic
// of log time against x over every run of the points within kTimeFitHalfWidthFraction x (the range) of it
// (each run one observation, so repeats weigh in), evaluated at the point; a straight line where only two
// values are within reach, and the point's own (geometric) mean where it is alone.
std::vector<double> smoothed_times(std::span<const TimeCurvePoint> points,
                                   double half_width_fraction = kTimeFitHalfWidthFraction);

}  // namespace wattwise::analysis
